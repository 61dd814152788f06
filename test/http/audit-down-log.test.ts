/**
 * The credentials audit log unwritable (disk full, a stalled disk past the queue
 * bound) while resellers keep reading credentials. A read whose answer could not be recorded was
 * refused (503) without a word in the log; every failed read wrote its own error line with a stack.
 * Now both tell the operator: the first at once with its request id and error, the rest counted
 * exactly into a summary.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer, buildTestGateway } from '../helpers/gateway.js';

type Line = Record<string, unknown>;
const parse = (logs: string[]): Line[] => logs.flatMap((chunk) => chunk.split('\n')).filter(Boolean).map((line) => JSON.parse(line) as Line);
const auditLines = (logs: string[]) => parse(logs).filter((line) => String(line.msg).startsWith('audit record could not be written'));
const accounted = (lines: Line[]) => lines.reduce((sum, line) => sum + (line.log_summary === true ? Number(line.repeated) : 1), 0);

t.test('audit log unwritable: answers refused and failures both told, once and counted', async (t) => {
  const gw = await buildTestGateway();
  let closed = false;
  t.teardown(() => (closed ? undefined : gw.close()));
  const key = gw.keys['acme:all'] as string;
  gw.audit.failing = true;
  const READS = 60;
  for (let i = 0; i < READS; i++) {
    // Acme's own service (its answer refused, 503) and one that is not acme's (404).
    const own = await gw.app.inject({ url: '/v1/services/1/credentials', headers: bearer(key) });
    assert.equal(own.statusCode, 503);
    const other = await gw.app.inject({ url: '/v1/services/999999/credentials', headers: bearer(key) });
    assert.equal(other.statusCode, 404);
  }
  const during = auditLines(gw.logs);
  assert.ok(during.length >= 1, 'the operator is told that answers are refused for want of an audit record');
  assert.ok(during.length <= 4, `a bounded number of lines, not one per read: ${during.length} lines for ${2 * READS} reads`);
  const first = during[0] as Line;
  assert.equal(typeof first.request_id, 'string', 'the first line is the request\'s own');
  assert.match(String((first.err as { message?: string } | undefined)?.message), /audit log unavailable/, 'the first line carries the error');
  assert.equal(typeof (first.err as { stack?: string } | undefined)?.stack, 'string', 'with its stack');

  await gw.close();
  closed = true;
  const all = auditLines(gw.logs);
  assert.equal(accounted(all), 2 * READS, 'every unwritten record is accounted for, exactly');
});
