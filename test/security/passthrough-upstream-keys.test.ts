/**
 * The v1 passthrough picks an account's upstream key by the account's upstream id, which an
 * operator types (admin API, CLI). An id that is a name of Object.prototype (`constructor`,
 * `toString`, `__proto__`) names no configured key: nothing is sent upstream, as for any other id
 * without a key, and the operator is told which id has none.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import t from 'tap';
import { buildApp } from '../../src/app.js';
import { MemoryAuditLog } from '../../src/audit.js';
import { parseConfig, type ResolvedConfig } from '../../src/config.js';
import { KeyService } from '../../src/keys/key-service.js';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { BACKENDS } from '../../mappings/index.js';
import { bearer, fakeResolve, GENEROUS_LIMITS, TEST_PEPPER, TEST_WEBHOOK_KEY } from '../helpers/gateway.js';
import { json, SERVICE, startFakeUpstream, UPSTREAM_KEYS } from '../mappings/v1/harness.js';

t.test('v1 passthrough: an upstream id that is a prototype name has no upstream key', async (t) => {
  const upstream = await startFakeUpstream();
  upstream.answer(json(200, SERVICE));
  const config = parseConfig(
    {
      profile: 'A',
      logLevel: 'info',
      keys: { pepper: TEST_PEPPER },
      webhooks: { encryptionKey: TEST_WEBHOOK_KEY },
      doctor: { enabled: false },
      rateLimits: GENEROUS_LIMITS,
      upstream: { backend: 'v1', v1: { url: upstream.url, apiKeys: UPSTREAM_KEYS, timeoutMs: 500, writeTimeoutMs: 700 } },
    },
    BACKENDS,
  ) as ResolvedConfig;
  const stores = createMemoryStores();
  const logs: string[] = [];
  const logStream = new Writable({ write(chunk, _encoding, done) { logs.push(String(chunk)); done(); } });
  const app = await buildApp(config, { stores, audit: new MemoryAuditLog(), logStream, resolveHost: fakeResolve, backends: BACKENDS, runWebhooks: false });
  await app.ready();
  t.teardown(async () => {
    await app.close();
    await upstream.close();
  });
  const keys = new KeyService(stores.keys, TEST_PEPPER);
  for (const upstreamId of ['constructor', 'toString', '__proto__']) {
    const accountId = `proto-${upstreamId.replace(/_/g, 'u')}`;
    await keys.createAccount({ id: accountId, name: accountId, upstreamId });
    const { key } = await keys.issue({ accountId, name: 'all', scopes: ['read:services'] });
    const before = upstream.received.length;
    const response = await app.inject({ method: 'GET', url: '/v1/services/7', headers: bearer(key) });
    assert.equal(response.statusCode, 502, `${upstreamId}: ${response.body}`);
    assert.equal(response.json().reason, 'upstream_error');
    assert.equal(upstream.received.length, before, `${upstreamId}: nothing is sent upstream`);
    assert.ok(logs.some((line) => line.includes(`no key for upstream id \\"${upstreamId}\\"`)), `${upstreamId}: the operator is told`);
  }
});
