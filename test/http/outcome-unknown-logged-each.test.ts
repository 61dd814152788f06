/**
 * A write whose outcome is unknown is logged every time it happens, with its own
 * request and account (README "Repeated lines"): each is a request an operator may have to
 * reconcile. Folding the second into the first one's summary left the operator one request id for
 * two writes to look up.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer, buildTestGateway } from '../helpers/gateway.js';

t.test('two writes timing out after they were sent: two upstream failure lines, each with its request id', async (t) => {
  const gw = await buildTestGateway({ whmcs: { timeoutMs: 2_000, actionTimeoutsMs: { ModuleCustom: 300 } } });
  t.teardown(() => gw.close());
  const key = gw.keys['acme:all'] as string;
  gw.simulator.inject({ action: 'ModuleCustom', kind: 'stall_after_effect', ms: 1_000, times: 2 });
  const ids: string[] = [];
  for (const attempt of ['a', 'b']) {
    const response = await gw.app.inject({
      method: 'POST',
      url: '/v1/services/1/actions',
      headers: { ...bearer(key), 'content-type': 'application/json', 'idempotency-key': `unknown-reboot-${attempt}` },
      payload: JSON.stringify({ action: 'reboot' }),
    });
    assert.equal(response.statusCode, 504, response.body);
    ids.push(String(response.json().request_id));
  }
  const lines = gw.logs
    .flatMap((chunk) => chunk.split('\n'))
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => String(line.msg).startsWith('upstream failure') && line.outcome_unknown === true);
  assert.deepEqual(
    lines.map((line) => [line.request_id, line.account_id, line.log_summary]),
    ids.map((id) => [id, 'acme', undefined]),
    'each write of unknown outcome is its own line, naming its request',
  );
});
