/**
 * The bound on the kinds followed at once (src/repeated-log.ts, MAX_KINDS) is a
 * ceiling for unbounded messages, not a budget for ordinary ones: an outage that fails a hundred
 * and fifty different ways (each backend, reason and upstream message its own kind) still writes
 * the first line of every one of them. A smaller bound silenced every kind past it.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { createRepeatedLog } from '../../src/repeated-log.js';

t.test('150 distinct kinds: each one\'s first line is written at once', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: 'info' }, { write: (text: string) => void lines.push(JSON.parse(text) as Record<string, unknown>) }) as unknown as FastifyBaseLogger;
  const repeats = createRepeatedLog(log, 60_000);
  for (let i = 0; i < 150; i++) repeats.note('error', 'upstream failure', { upstream: `WHMCS answered error ${i}` });
  assert.deepEqual(
    lines.map((line) => line.upstream),
    Array.from({ length: 150 }, (_, i) => `WHMCS answered error ${i}`),
    'every distinct failure is told to the operator once',
  );
  repeats.flush();
  assert.equal(lines.length, 150, 'no repeat: no summary');
});
