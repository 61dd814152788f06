/**
 * The delivery worker polls the outbox every `workerIntervalMs` (500 ms by
 * default) and wrote a warning at each poll that found it unreachable: 7 200 lines an hour per
 * process through a Redis outage. Now the first is written at once, the others counted into a
 * summary per window, and what is pending when the worker stops is written then.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import t from 'tap';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { WebhookConfigSchema } from '../../src/config.js';
import { MemoryWebhookOutbox } from '../../src/stores/memory/webhook-outbox.js';
import { MemoryWebhookStore } from '../../src/stores/memory/webhook-store.js';
import { StoreUnavailableError } from '../../src/stores/types.js';
import { SecretBox } from '../../src/webhooks/secret-box.js';
import { DeliveryWorker } from '../../src/webhooks/worker.js';
import { LIVE_ACCOUNTS } from '../helpers/worker-harness.js';

type Line = Record<string, unknown> & { msg: string };

t.test('an unreachable outbox: one line at once, the exact count of the polls that failed at stop', async () => {
  const lines: Line[] = [];
  const log = pino({ level: 'info' }, { write: (text: string) => void lines.push(JSON.parse(text) as Line) }) as unknown as FastifyBaseLogger;
  const outbox = new MemoryWebhookOutbox();
  let failedPolls = 0;
  outbox.claim = async () => {
    failedPolls += 1;
    throw new StoreUnavailableError('Redis unavailable: connect ECONNREFUSED');
  };
  const worker = new DeliveryWorker({
    outbox,
    store: new MemoryWebhookStore(),
    accounts: LIVE_ACCOUNTS,
    box: new SecretBox(randomBytes(32)),
    config: WebhookConfigSchema.parse({ allowPrivateTargets: true, workerIntervalMs: 1 }),
    transport: { resolve: async () => ['127.0.0.1'], allowPrivateTargets: true },
    log,
  });
  worker.start();
  while (failedPolls < 200) await new Promise((resolve) => setTimeout(resolve, 5));
  const polls = failedPolls;
  const during = lines.filter((line) => line.msg.startsWith('webhook outbox unavailable'));
  assert.ok(during.length <= 2, `a bounded number of lines, not one per poll: ${during.length} lines for ${polls} failed polls`);
  assert.match(String((during[0]?.err as { message?: string } | undefined)?.message), /ECONNREFUSED/, 'the first line at once, with its error');
  await worker.stop();
  const all = lines.filter((line) => line.msg.startsWith('webhook outbox unavailable'));
  const summaries = all.filter((line) => line.log_summary === true);
  assert.ok(summaries.length >= 1, 'a summary is written at stop for what was pending');
  const accounted = all.length - summaries.length + summaries.reduce((sum, line) => sum + Number(line.repeated), 0);
  assert.equal(accounted, failedPolls, 'every failed poll is accounted for, exactly');
});
