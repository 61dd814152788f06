/** The passthrough's config: from the file or the environment, and errors that never quote a key. */
import assert from 'node:assert/strict';
import t from 'tap';
import { ConfigError, parseConfig } from '../../../src/config.js';
import { loadConfig } from '../../../src/load-config.js';
import { describeUpstream } from '../../../src/backend/factory.js';
import { BACKENDS } from '../../../mappings/index.js';

const ENV = { KEY_PEPPER: 'config-test-pepper-0123456789abcdef0123', WEBHOOK_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64') };

t.test('v1 passthrough config', async (t) => {
  t.test('the environment names the upstream and each account\'s key; the start-up line names no key', async () => {
    const config = loadConfig(BACKENDS, { ...ENV, V1_UPSTREAM_URL: 'https://panel.example.com/api/', V1_UPSTREAM_API_KEYS: 'acme=key-a=1, beta=key-b' });
    assert.equal(config.upstream?.backend, 'v1');
    const section = config.upstream?.v1 as { apiKeys: Record<string, string>; timeoutMs: number };
    assert.deepEqual(section.apiKeys, { acme: 'key-a=1', beta: 'key-b' });
    assert.equal(section.timeoutMs, 15_000);
    assert.equal(describeUpstream(config as never, BACKENDS), 'v1 at https://panel.example.com/api');
  });

  t.test('refuses a bad section, naming the fields and never the key', async () => {
    assert.throws(
      () => loadConfig(BACKENDS, { ...ENV, V1_UPSTREAM_URL: 'ftp://panel.example.com', V1_UPSTREAM_API_KEYS: 'bare-secret-key-123,beta=has space' }),
      (error: Error) =>
        error instanceof ConfigError &&
        /upstream\.v1\.url/.test(error.message) &&
        /upstream\.v1\.apiKeys\.entry-1: must be a key/.test(error.message) &&
        !error.message.includes('bare-secret-key-123'),
    );
    assert.throws(() => parseConfig({ keys: { pepper: ENV.KEY_PEPPER }, upstream: { backend: 'v1', v1: { url: 'https://p.example', apiKeys: {} } } }, BACKENDS), /upstream\.v1\.apiKeys: must name at least one/);
  });
});
