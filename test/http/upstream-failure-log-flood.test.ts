/**
 * A flood of requests against an upstream that is down or saturated. Every
 * request refused by the open circuit breaker, or shed by the waiting bound, wrote its own
 * `upstream failure` line: thousands a second under a flood. Now the first of each kind is written
 * at once, the rest counted into one summary (with the exact count) written when a window ends
 * or, as here, at shutdown; the metrics still count every refusal.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer, buildTestGateway } from '../helpers/gateway.js';

type Line = Record<string, unknown>;
const parse = (logs: string[]): Line[] => logs.flatMap((chunk) => chunk.split('\n')).filter(Boolean).map((line) => JSON.parse(line) as Line);
/** The `upstream failure` lines (first lines and summaries) saying the upstream is unavailable. */
const failureLines = (logs: string[]) => parse(logs).filter((line) => line.msg !== 'request completed' && String(line.msg).startsWith('upstream failure') && line.reason === 'upstream_unavailable');
/** Every occurrence the lines account for: one per first line, `repeated` per summary. */
const accounted = (lines: Line[]) => lines.reduce((sum, line) => sum + (line.log_summary === true ? Number(line.repeated) : 1), 0);

t.test('the circuit breaker open: 300 refusals write one line at once and one summary at shutdown', async (t) => {
  const gw = await buildTestGateway({ whmcs: { timeoutMs: 200, circuitBreaker: { failureThreshold: 2, openMs: 600_000 } } });
  let closed = false;
  t.teardown(() => (closed ? undefined : gw.close()));
  const key = gw.keys['acme:all'] as string;
  gw.simulator.inject({ kind: 'hang' });
  for (let i = 0; i < 2; i++) assert.equal((await gw.app.inject({ url: '/v1/me', headers: bearer(key) })).statusCode, 504);
  const before = failureLines(gw.logs).length;
  let refused = 0;
  for (let i = 0; i < 300; i++) {
    const response = await gw.app.inject({ url: '/v1/me', headers: bearer(key) });
    assert.equal(response.statusCode, 503);
    refused += 1;
  }
  const during = failureLines(gw.logs).slice(before);
  assert.equal(during.length, 1, `the first refusal is logged at once, the others are not (a flood logs a bounded number of lines): ${during.length} lines`);
  assert.equal(during[0]?.refused_by, 'circuit_breaker', 'the line says why the call was refused');
  assert.equal(during[0]?.account_id, 'acme', 'the first line names its account');
  assert.equal(typeof during[0]?.request_id, 'string', 'the first line is the request\'s own');
  const appLines = parse(gw.logs).filter((line) => line.msg !== 'request completed');
  assert.ok(appLines.length <= 10, `the whole outage writes a handful of lines besides the access log: ${appLines.length}`);

  await gw.close();
  closed = true;
  const after = failureLines(gw.logs).slice(before);
  assert.equal(after.length, 2, 'a summary is written at shutdown for what was pending');
  assert.equal(after[1]?.log_summary, true);
  assert.equal(after[1]?.repeated, refused - 1, 'the summary counts every refusal not written');
  assert.equal(accounted(after), refused);
});

t.test('calls shed by the waiting bound: one line at once, the exact count in the summary', async (t) => {
  // One connection, four waiting: of 40 requests at once, at least 35 are shed.
  const gw = await buildTestGateway({ whmcs: { connections: 1 } });
  let closed = false;
  t.teardown(() => (closed ? undefined : gw.close()));
  const key = gw.keys['acme:all'] as string;
  gw.simulator.inject({ kind: 'latency', ms: 200 });
  // Each reads another service: no call is shared with another.
  const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => gw.app.inject({ url: `/v1/services/${i + 1}`, headers: bearer(key) })));
  const shed = answers.filter((answer) => answer.statusCode === 503).length;
  assert.ok(shed >= 35, `calls past the bound are shed: ${shed}`);
  const during = failureLines(gw.logs);
  assert.equal(during.length, 1, `one line for the first shed call, not one per call: ${during.length} lines`);
  assert.equal(during[0]?.refused_by, 'queue_full');
  await gw.close();
  closed = true;
  const lines = failureLines(gw.logs);
  assert.equal(lines.length, 2, 'and one summary');
  assert.equal(lines[1]?.repeated, shed - 1);
});
