/**
 * The FOSSBilling doctor against what a real FOSSBilling answers a staff member set up too narrowly,
 * or a FOSSBilling that is busy while doctor runs.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import t from 'tap';
import { FossbillingConfigSchema } from '../../mappings/fossbilling/config.js';
import { diagnoseFossbilling } from '../../mappings/fossbilling/doctor.js';
import { startFossbillingSimulator } from '../../simulators/fossbilling/server.js';
import { listen } from '../../simulators/shared/listen.js';
import { PROFILE_ACTIONS } from '../../src/v1/schemas.js';

t.test('a staff member without access to a whole module (Api/Dispatcher.php error 725) fails the permissions check', async () => {
  // FOSSBilling's dispatcher refuses every method of a module the staff member has no access to
  // with code 725 (HTTP 200), before the method's own permission check (403) runs.
  const server = createServer((request, response) => {
    const module = /^\/api\/admin\/([a-z_]+)\//.exec(request.url ?? '')?.[1];
    request.resume();
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      module === 'invoice'
        ? JSON.stringify({ result: null, error: { message: 'You do not have access to the invoice module', code: 725 } })
        : JSON.stringify({ result: { list: [], total: 0, page: 1, pages: 1, per_page: 1 }, error: null }),
    );
  });
  const listening = await listen(server, '127.0.0.1', 0);
  try {
    const config = FossbillingConfigSchema.parse({ url: listening.url, apiToken: 'token-of-a-narrow-staff-member' });
    const checks = new Map((await diagnoseFossbilling(config, { serviceActions: PROFILE_ACTIONS.B })).map((check) => [check.id, check]));
    assert.equal(checks.get('credentials')?.status, 'pass');
    assert.equal(checks.get('permissions')?.status, 'fail', 'invoice/get and invoice/get_list answer 725: not allowed');
    assert.match(checks.get('permissions')?.detail ?? '', /invoice\/get \(denied\).*invoice\/get_list \(denied\)/);
  } finally {
    await listening.close();
  }
});

t.test('a busy FOSSBilling (its rate limiter) during the run does not fail the order-key search, which would stop orders', async () => {
  const sim = await startFossbillingSimulator();
  try {
    // FOSSBilling's api_authenticated_ip policy (1000 calls an hour by default) refusing the search.
    sim.inject({ kind: 'rate_limited', method: 'order/get_list' });
    const config = FossbillingConfigSchema.parse({ url: sim.url, apiToken: sim.apiToken });
    const checks = new Map((await diagnoseFossbilling(config, { serviceActions: PROFILE_ACTIONS.B })).map((check) => [check.id, check]));
    const search = checks.get('order-key-search');
    // Nothing is known about the meta search: what the last run found must stand (skip), not a
    // failure that answers every order 503 until the next run, with a fix about permissions.
    assert.equal(search?.status, 'skip', JSON.stringify(search));
  } finally {
    await sim.close();
  }
});

t.test('FOSSBilling\'s rate limiter refusing the gateway is named as such, with the setting that lifts it for the gateway', async () => {
  const sim = await startFossbillingSimulator();
  try {
    // Past 1000 calls an hour from one IP (FOSSBilling's default api_authenticated_ip policy), every call answers 429.
    sim.inject({ kind: 'rate_limited' });
    const config = FossbillingConfigSchema.parse({ url: sim.url, apiToken: sim.apiToken });
    const [credentials] = await diagnoseFossbilling(config, { serviceActions: PROFILE_ACTIONS.B });
    assert.equal(credentials?.status, 'fail');
    assert.doesNotMatch(credentials?.fix ?? '', /FOSSBILLING_API_TOKEN/, 'the token is fine');
    assert.match(credentials?.fix ?? '', /whitelist_ips/, credentials?.fix);
  } finally {
    await sim.close();
  }
});
