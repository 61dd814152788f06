import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { ConfigError, hasUpstream, parseConfig } from '../../src/config.js';
import { loadConfig } from '../../src/load-config.js';
import type { WhmcsConfig } from '../../mappings/whmcs/config.js';
import { BACKENDS } from '../../mappings/index.js';

const PEPPER = 'p'.repeat(40);
const WEBHOOK_KEY = Buffer.alloc(32, 1).toString('base64');

t.test('config', async (t) => {
  t.test('the shipped default is sandbox mode (no upstream), profile A, contract defaults', async () => {
    const config = loadConfig(BACKENDS, {});
    assert.equal(config.upstream, undefined);
    assert.equal(config.profile, 'A');
    assert.deepEqual(
      [config.rateLimits.keyPerMinute, config.rateLimits.keyBurst, config.rateLimits.keyPerDay, config.rateLimits.accountPerMinute, config.rateLimits.ipPerMinute],
      [60, 20, 5000, 120, 600],
    );
    assert.equal(config.bodyLimitBytes, 65536);
  });

  t.test('environment variables override the file', async () => {
    const config = loadConfig(BACKENDS, { PORT: '8080', HOST: '0.0.0.0', PROFILE: 'B', REDIS_URL: 'redis://127.0.0.1:7000', TRUSTED_PROXIES: '10.0.0.1, 10.0.0.2' });
    assert.equal(config.port, 8080);
    assert.equal(config.host, '0.0.0.0');
    assert.equal(config.profile, 'B');
    assert.equal(config.redisUrl, 'redis://127.0.0.1:7000');
    assert.deepEqual(config.trustedProxies, ['10.0.0.1', '10.0.0.2']);
  });

  t.test('the production example validates, with secrets from the environment', async () => {
    const env = { CONFIG_FILE: 'config/production.example.json', KEY_PEPPER: PEPPER, WHMCS_IDENTIFIER: 'id-from-env', WHMCS_SECRET: 'from-env', WEBHOOK_ENCRYPTION_KEY: WEBHOOK_KEY };
    const config = loadConfig(BACKENDS, env);
    const whmcs = config.upstream?.whmcs as WhmcsConfig;
    assert.deepEqual([whmcs.identifier, whmcs.secret], ['id-from-env', 'from-env']);
    assert.deepEqual(whmcs.publicProductIds, ['1', '2', '3']);
    // It holds no stand-in credentials: without them in the environment, boot names what is missing.
    const { WHMCS_IDENTIFIER: _identifier, WHMCS_SECRET: _secret, ...without } = env;
    assert.throws(() => loadConfig(BACKENDS, without), /upstream\.whmcs\.identifier/);
  });

  t.test('an upstream from the environment alone switches sandbox mode off', async () => {
    const config = loadConfig(BACKENDS, { WHMCS_URL: 'https://billing.example.com', WHMCS_IDENTIFIER: 'id', WHMCS_SECRET: 's', KEY_PEPPER: PEPPER, WEBHOOK_ENCRYPTION_KEY: WEBHOOK_KEY });
    assert.equal(config.upstream?.backend, 'whmcs');
    assert.equal(hasUpstream(config), true);
  });

  t.test('validates upstream.backend against the registry and the section by its plugin', async () => {
    assert.throws(() => parseConfig({ upstream: { backend: 'odoo' } }, BACKENDS), /upstream\.backend: unknown backend "odoo"; known: whmcs, fossbilling/);
    assert.throws(
      () => parseConfig({ keys: { pepper: PEPPER }, upstream: { backend: 'whmcs', whmcs: { url: 'https://b.example' }, other: {} } }, BACKENDS),
      /upstream\.other: not a setting of backend "whmcs"/,
    );
    assert.throws(() => parseConfig({ keys: { pepper: PEPPER }, upstream: { backend: 'whmcs', whmcs: { url: 'https://b.example' } } }, BACKENDS), /- upstream\.whmcs\.identifier:/);
  });

  t.test('BACKEND without that backend\'s section picks the sandbox upstream', async () => {
    const config = loadConfig(BACKENDS, { BACKEND: 'whmcs' });
    assert.equal(config.upstream?.backend, 'whmcs');
    assert.equal(hasUpstream(config), false);
    assert.throws(() => loadConfig(BACKENDS, { BACKEND: 'nope' }), /unknown backend "nope"/);
  });

  t.test('refuses bad values, naming each field', async () => {
    assert.throws(() => loadConfig(BACKENDS, { PORT: 'http' }), (error: Error) => error instanceof ConfigError && /PORT must be a whole number/.test(error.message));
    assert.throws(() => loadConfig(BACKENDS, { PROFILE: 'C' }), (error: Error) => error instanceof ConfigError && /- profile:/.test(error.message));
    assert.throws(() => loadConfig(BACKENDS, { WHMCS_URL: 'not a url', KEY_PEPPER: PEPPER }), (error: Error) => /upstream\.whmcs\.url/.test(error.message) && /upstream\.whmcs\.identifier/.test(error.message));
    assert.throws(() => loadConfig(BACKENDS, { KEY_PEPPER: 'short' }), (error: Error) => /keys\.pepper/.test(error.message));
    assert.throws(() => loadConfig(BACKENDS, { CONFIG_FILE: 'config/missing.json' }), /cannot read config file/);
  });

  t.test('a listen address with a port or a scheme is refused at boot, naming the field', async () => {
    for (const [variable, field] of [['HOST', 'host'], ['OPS_HOST', 'ops.host']] as const) {
      for (const bad of ['gateway:3000', '[::1]', 'http://0.0.0.0', 'two words']) {
        assert.throws(() => loadConfig(BACKENDS, { [variable]: bad }), (error: Error) => error instanceof ConfigError && error.message.includes(`- ${field}: must be an IP address or a host name`), `${variable}=${bad}`);
      }
      for (const good of ['0.0.0.0', '::', '::1', 'localhost', 'gateway.internal']) assert.doesNotThrow(() => loadConfig(BACKENDS, { [variable]: good }), `${variable}=${good}`);
    }
    assert.equal(loadConfig(BACKENDS, { HOST: '::' }).host, '::');
    assert.equal(loadConfig(BACKENDS, { OPS_HOST: 'gateway.internal' }).ops.host, 'gateway.internal');
  });

  t.test('a config file that is not JSON is refused by line and column, never quoting the text around the error', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'rg-config-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'gateway.json');
    for (const [text, where] of [
      ['{\n  "upstream": {\n    "whmcs": { "secret": s3cr3t-value-42 }\n  }\n}\n', /an unexpected character/],
      ['{\n  "keys": { "pepper": "s3cr3t-value-42 }\n}', /Bad control character in string literal at line 2, column 41$/],
      ['{\n  "keys": { "pepper": "s3cr3t-value-42", }\n}', /Expected double-quoted property name at line 2, column 42$/],
      ['{ "keys": { "pepper": "s3cr3t-value-42"', /after property value at line 1, column 40$/],
      ['{ "keys": ', /ends too early/],
    ] as const) {
      writeFileSync(file, text);
      assert.throws(
        () => loadConfig(BACKENDS, { CONFIG_FILE: file }),
        (error: Error) => error instanceof ConfigError && where.test(error.message) && !/s3cr3t|value-42/.test(error.message),
        text,
      );
    }
    writeFileSync(file, '[1]');
    assert.throws(() => loadConfig(BACKENDS, { CONFIG_FILE: file }), /is not a JSON object/);
  });

  t.test('refuses an upstream URL with a user name or password, for every backend, without echoing it', async () => {
    const common = { KEY_PEPPER: PEPPER, WEBHOOK_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') };
    const backends = [
      ['whmcs', 'WHMCS_URL', { WHMCS_IDENTIFIER: 'id', WHMCS_SECRET: 'secret' }],
      ['fossbilling', 'FOSSBILLING_URL', { FOSSBILLING_API_TOKEN: 'token' }],
      ['v1', 'V1_UPSTREAM_URL', { V1_UPSTREAM_API_KEYS: 'acme=rk_upstream' }],
    ] as const;
    for (const [backend, variable, secrets] of backends) {
      const env = { ...common, ...secrets };
      assert.doesNotThrow(() => loadConfig(BACKENDS, { ...env, BACKEND: backend, [variable]: 'https://panel.example/' }), backend);
      assert.throws(
        () => loadConfig(BACKENDS, { ...env, BACKEND: backend, [variable]: 'https://basic:hunter2@panel.example/' }),
        (error: Error) =>
          error instanceof ConfigError &&
          new RegExp(`upstream\\.${backend}\\.url: must not carry a user name or password`).test(error.message) &&
          !error.message.includes('hunter2'),
        backend,
      );
    }
  });

  t.test('refuses idempotency windows in which no key would ever be stale', async () => {
    assert.doesNotThrow(() => parseConfig({ idempotency: { replayWindowMs: 60_000, staleRetentionMs: 120_000 } }, BACKENDS));
    assert.throws(
      () => parseConfig({ idempotency: { replayWindowMs: 60_000, staleRetentionMs: 60_000 } }, BACKENDS),
      (error: Error) => error instanceof ConfigError && /- idempotency\.staleRetentionMs: must be longer than replayWindowMs/.test(error.message),
    );
  });

  t.test('names every wrong field at once: the root, the backend\'s section and the secrets an upstream needs', async () => {
    const raw = { profile: 'C', rateLimits: { keyPerMinute: -1 }, upstream: { backend: 'whmcs', whmcs: { url: 'http://127.0.0.1:1' } } };
    assert.throws(
      () => parseConfig(raw, BACKENDS),
      (error: Error) => {
        assert.ok(error instanceof ConfigError);
        const named = error.message.split('\n').filter((line) => line.startsWith('  - ')).map((line) => line.slice(4).split(':')[0]);
        assert.deepEqual(named.sort(), ['keys.pepper', 'profile', 'rateLimits.keyPerMinute', 'upstream.whmcs.identifier', 'upstream.whmcs.secret', 'webhooks.encryptionKey']);
        return true;
      },
    );
    // An unknown backend is named beside the rest; no section of its own is checked then.
    assert.throws(() => parseConfig({ profile: 'C', upstream: { backend: 'nope' } }, BACKENDS), (error: Error) => /- profile:/.test(error.message) && /upstream\.backend: unknown backend "nope"/.test(error.message));
  });

  t.test('the default file may be absent, but one that is there and cannot be read stops the boot', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-config-'));
    const cwd = process.cwd();
    t.teardown(() => {
      process.chdir(cwd);
      rmSync(dir, { recursive: true, force: true });
    });
    process.chdir(dir);
    assert.equal(loadConfig(BACKENDS, {}).profile, 'A');
    mkdirSync(join(dir, 'config', 'gateway.json'), { recursive: true });
    assert.throws(() => loadConfig(BACKENDS, {}), (error: Error) => error instanceof ConfigError && /cannot read config file config\/gateway\.json: EISDIR/.test(error.message));
  });

  t.test('outside sandbox mode the webhook encryption key is required, and must be 32 bytes', async () => {
    const upstream = { WHMCS_URL: 'https://billing.example.com', WHMCS_IDENTIFIER: 'id', WHMCS_SECRET: 's', KEY_PEPPER: PEPPER };
    assert.throws(() => loadConfig(BACKENDS, upstream), (error: Error) => error instanceof ConfigError && /webhooks\.encryptionKey: required/.test(error.message));
    assert.throws(() => loadConfig(BACKENDS, { ...upstream, WEBHOOK_ENCRYPTION_KEY: 'c2hvcnQ=' }), /webhooks\.encryptionKey: must be 32 random bytes/);
    assert.equal(loadConfig(BACKENDS, {}).webhooks.encryptionKey, undefined);
  });

  t.test('the IPv6 prefix of the source-IP limit is /64 unless set, and must be a prefix length', async () => {
    assert.equal(loadConfig(BACKENDS, {}).rateLimits.ipv6PrefixLength, 64);
    for (const bad of [0, 129, 64.5, '64']) {
      assert.throws(() => parseConfig({ rateLimits: { ipv6PrefixLength: bad } }, BACKENDS), /- rateLimits\.ipv6PrefixLength:/);
    }
    assert.equal(parseConfig({ rateLimits: { ipv6PrefixLength: 128 } }, BACKENDS).rateLimits.ipv6PrefixLength, 128);
  });

  t.test('the limits\' window stops the boot when longer than the Redis store keeps (2^30 ms)', async () => {
    assert.equal(parseConfig({ rateLimits: { windowMs: 2 ** 30 } }, BACKENDS).rateLimits.windowMs, 2 ** 30);
    assert.throws(() => parseConfig({ rateLimits: { windowMs: 2 ** 30 + 1 } }, BACKENDS), /- rateLimits\.windowMs: must be at most 1073741824 ms/);
  });
});
