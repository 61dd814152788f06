/**
 * With WORKERS above 1 the admin API is the cluster primary's
 * (src/admin/primary.ts), built apart from a single process's. It checks an account's upstream id
 * against the backend as the single process does: without the registry handed to it, the primary
 * stored `01` for WHMCS client 1 (each request of the account then failed), and no test noticed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import t from 'tap';
import type { FastifyBaseLogger } from 'fastify';
import { BACKENDS } from '../../mappings/index.js';
import { createPrimaryAdminApi } from '../../src/admin/primary.js';
import { ADMIN_SCOPES, mintAdminToken } from '../../src/admin/tokens.js';
import { parseConfig, type ResolvedConfig } from '../../src/config.js';
import { buildOpsApp } from '../../src/ops/server.js';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { TEST_PEPPER, TEST_WEBHOOK_KEY } from '../helpers/gateway.js';

t.test("the cluster primary's admin API refuses an upstream id WHMCS cannot serve", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-primary-admin-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const panel = mintAdminToken('panel', [...ADMIN_SCOPES]);
  const config = parseConfig(
    {
      keys: { pepper: TEST_PEPPER },
      webhooks: { encryptionKey: TEST_WEBHOOK_KEY },
      doctor: { enabled: false },
      admin: { tokens: [panel.entry], auditFile: join(dir, 'admin-audit.log') },
      // Never called: the check is the backend's rule, not a lookup.
      upstream: { backend: 'whmcs', whmcs: { url: 'http://127.0.0.1:9/includes/api.php', identifier: 'id', secret: 'secret' } },
    },
    BACKENDS,
  ) as ResolvedConfig;
  const stores = createMemoryStores();
  const log = pino({ level: 'silent' }) as unknown as FastifyBaseLogger;
  const primary = createPrimaryAdminApi(config, stores, log, BACKENDS);
  const ops = buildOpsApp({
    admin: primary.admin,
    metrics: { registry: { contentType: 'text/plain', metrics: async () => '' }, collectRuntimeMetrics: () => undefined, opsRequests: { count: () => undefined } },
    readiness: { check: async () => ({ ready: true, store: 'ok', upstream: 'ok', shuttingDown: false }) },
    log,
  });
  t.teardown(async () => {
    await ops.close();
    await primary.close();
  });
  const create = (upstreamId: string) =>
    ops.inject({
      method: 'POST',
      url: '/admin/v1/accounts',
      headers: { authorization: `Bearer ${panel.token}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ id: `acct-${upstreamId.trim()}`, name: 'Reseller', upstream_id: upstreamId }),
    });
  const refused = await create('01');
  assert.equal(refused.statusCode, 400, refused.body);
  assert.match(refused.json().errors[0].detail, /WHMCS client id/);
  assert.equal(await stores.keys.getAccount('acct-01'), null, 'nothing stored');
  assert.equal((await create('1')).statusCode, 201);
});
