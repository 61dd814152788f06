/**
 * Counters an operator alerts on (README, Operations: "alert on" the disabled endpoints and the
 * store errors; failed audits, given-up deliveries, breaker openings) must be exposed at 0 from the
 * first scrape. A series that first appears at 1 is invisible to `increase()`/`rate()` (Prometheus
 * has no earlier sample to compare with), so the first endpoint disabled after a restart, usually
 * the only one, never fires `increase(gateway_webhook_endpoints_disabled_total[10m]) > 0`.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { buildOpsApp } from '../../src/ops/server.js';
import { buildTestGateway } from '../helpers/gateway.js';

function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels)
    .map(([label, value]) => `${label}="${value}"`)
    .sort()
    .join(',');
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = (match[2] ?? '').split(/,(?=[a-zA-Z_]+=")/).filter(Boolean).sort().join(',');
    if (found === wanted) return Number(match[3]);
  }
  return undefined;
}

t.test('a fresh gateway exposes its alertable counters at 0, before any event', async (t) => {
  const gw = await buildTestGateway();
  const ops = buildOpsApp(gw.app);
  t.teardown(async () => {
    await ops.close();
    await gw.close();
  });
  const text = (await ops.inject({ method: 'GET', url: '/metrics' })).body;
  const zero = (name: string, labels: Record<string, string>) => assert.equal(sample(text, name, labels), 0, `${name}${JSON.stringify(labels)}`);

  for (const reason of ['gone', 'failing']) zero('gateway_webhook_endpoints_disabled_total', { reason });
  for (const outcome of ['delivered', 'retrying', 'failed', 'blocked']) zero('gateway_webhook_deliveries_total', { outcome });
  for (const store of ['rate_limits', 'idempotency', 'keys', 'webhooks']) zero('gateway_store_errors_total', { store });
  zero('gateway_store_fallbacks_total', { store: 'rate_limits', fallback: 'memory' });
  zero('gateway_store_fallbacks_total', { store: 'keys', fallback: 'stale' });
  for (const outcome of ['new', 'replayed', 'conflict', 'in_progress', 'stale', 'outcome_unknown']) zero('gateway_idempotency_requests_total', { outcome });
  for (const outcome of ['returned', 'denied', 'not_found', 'failed']) zero('gateway_audit_writes_total', { outcome, result: 'failed' });
  for (const state of ['open', 'half_open', 'closed']) zero('gateway_upstream_circuit_breaker_transitions_total', { backend: 'whmcs', state });
});
