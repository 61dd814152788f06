/**
 * The piece that keeps a flood of identical failures from writing a log line
 * each (src/repeated-log.ts): the first line of a kind at once, then one summary per kind and
 * window with the exact count, and what is pending written at shutdown.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { createRepeatedLog } from '../../src/repeated-log.js';

type Line = Record<string, unknown> & { msg: string; level: number };

function capture(): { log: FastifyBaseLogger; lines: Line[] } {
  const lines: Line[] = [];
  const log = pino({ level: 'info' }, { write: (text: string) => void lines.push(JSON.parse(text) as Line) });
  return { log: log as unknown as FastifyBaseLogger, lines };
}

/** Every occurrence the lines account for: one per first line, `repeated` per summary. */
const accounted = (lines: Line[]) => lines.reduce((sum, line) => sum + (line.log_summary === true ? Number(line.repeated) : 1), 0);

t.test('a flood of one kind: its first line at once, then one summary with the exact count at shutdown', async () => {
  const { log, lines } = capture();
  const repeats = createRepeatedLog(log, 60_000);
  for (let i = 0; i < 5_000; i++) repeats.note('warn', 'upstream failure', { reason: 'upstream_unavailable', refused_by: 'circuit_breaker' }, { account_id: `acct-${i % 7}` });
  assert.equal(lines.length, 1, 'the first occurrence is written at once, the others wait for the summary');
  assert.deepEqual({ ...lines[0], time: 0, pid: 0, hostname: '' }, {
    level: 40, time: 0, pid: 0, hostname: '', reason: 'upstream_unavailable', refused_by: 'circuit_breaker', account_id: 'acct-0', msg: 'upstream failure',
  });
  repeats.flush();
  assert.equal(lines.length, 2, 'one summary');
  const summary = lines[1] as Line;
  assert.equal(summary.level, 40, 'the summary keeps its level');
  assert.equal(summary.log_summary, true);
  assert.equal(summary.repeated, 4_999, 'the exact count of what was not written');
  assert.equal(summary.reason, 'upstream_unavailable');
  assert.equal(summary.refused_by, 'circuit_breaker');
  assert.equal(summary.account_id, undefined, "one occurrence's own fields are not the kind's");
  repeats.flush();
  assert.equal(lines.length, 2, 'nothing pending: no more summaries');
});

t.test('kinds are counted apart; a window ends with a summary per kind that repeated', async () => {
  const { log, lines } = capture();
  const repeats = createRepeatedLog(log, 20);
  for (let i = 0; i < 100; i++) repeats.note('warn', 'upstream failure', { refused_by: 'queue_full' });
  for (let i = 0; i < 30; i++) repeats.note('warn', 'upstream failure', { refused_by: 'circuit_breaker' });
  repeats.note('error', 'upstream failure', { upstream: 'WHMCS refused the gateway' });
  assert.equal(lines.length, 3, 'one first line per kind');
  // The window's end is awaited, not timed: it writes both summaries.
  while (lines.length < 5) await new Promise((resolve) => setTimeout(resolve, 10));
  const summaries = lines.slice(3);
  assert.deepEqual(summaries.map((line) => [line.refused_by, line.repeated]).sort(), [['circuit_breaker', 29], ['queue_full', 99]]);
  assert.equal(accounted(lines), 131);
  repeats.flush();
  assert.equal(lines.length, 5, 'the window wrote everything');
});

t.test('a kind quiet for a whole window is news again: its next line is written at once', async () => {
  const { log, lines } = capture();
  const repeats = createRepeatedLog(log, 20);
  repeats.note('warn', 'webhook outbox unavailable; retrying', {});
  repeats.note('warn', 'webhook outbox unavailable; retrying', {});
  while (lines.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(lines[1]?.repeated, 1);
  // A window with nothing, then the kind again: written at once, not folded into a summary.
  await new Promise((resolve) => setTimeout(resolve, 60));
  repeats.note('warn', 'webhook outbox unavailable; retrying', {});
  assert.equal(lines.length, 3);
  assert.equal(lines[2]?.log_summary, undefined, 'a first line, not a summary');
  repeats.flush();
  assert.equal(lines.length, 3);
});

t.test('kinds without bound (a message quoting varied upstream words) fold into one catch-all', async () => {
  const { log, lines } = capture();
  const repeats = createRepeatedLog(log, 60_000);
  for (let i = 0; i < 10_000; i++) repeats.note('error', 'upstream failure', { upstream: `answer ${i}` });
  assert.ok(lines.length <= 201, `a bounded number of lines: ${lines.length}`);
  repeats.flush();
  assert.ok(lines.length <= 202);
  assert.equal(accounted(lines), 10_000, 'every occurrence accounted for');
});
