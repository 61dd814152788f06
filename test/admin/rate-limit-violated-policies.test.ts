/**
 * The admin API's own rate limit answered 429 without `violated_policies`, which the
 * contract (§2: "429 rate_limited — any limit; with Retry-After and violated_policies") asks of every
 * 429 and the v1 API carries (src/limits/rate-limiter.ts). The admin API says its errors are "as in
 * the v1 API": its 429 names the policy it passed (the per-token minute), and its OpenAPI document's
 * Problem schema describes the field, as v1's does.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { adminOpenApiDocument } from '../../src/admin/routes/index.js';
import { buildAdminGateway } from '../admin/helpers.js';

t.test('the admin 429 carries violated_policies, and its document says so', async (t) => {
  const gw = await buildAdminGateway({ admin: { perMinute: 2 } });
  t.teardown(() => gw.close());
  for (let i = 0; i < 2; i++) assert.equal((await gw.admin('GET', '/admin/v1/accounts', { token: 'admin:read' })).statusCode, 200);
  const limited = await gw.admin('GET', '/admin/v1/accounts', { token: 'admin:read' });
  assert.equal(limited.statusCode, 429);
  assert.ok(Number(limited.headers['retry-after']) >= 1);
  const problem = limited.json();
  assert.equal(problem.reason, 'rate_limited');
  assert.ok(Array.isArray(problem.violated_policies) && problem.violated_policies.length > 0, `violated_policies: ${limited.body}`);
  assert.deepEqual(problem.violated_policies, ['admin_token_minute']);

  const doc = adminOpenApiDocument({ serverUrl: 'http://127.0.0.1:9464', profile: 'A' }) as {
    components: { schemas: Record<string, { properties?: Record<string, { type?: string; description?: string }> }> };
  };
  const field = doc.components.schemas.AdminProblem?.properties?.violated_policies;
  assert.equal(field?.type, 'array', 'AdminProblem describes violated_policies');
  assert.match(field?.description ?? '', /admin_token_minute/);
});
