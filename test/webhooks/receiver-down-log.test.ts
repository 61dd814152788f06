/**
 * A reseller's webhook receiver down while its account has a backlog (a batch of
 * invoices, a mass suspension). Every attempt of every event wrote its own `webhook delivery
 * attempt failed` line: the backlog once per retry step, for days. Now the first failure of a kind
 * (account, status or transport reason) is written at once with its event, the others counted
 * exactly; each event's attempts stay in the delivery log (admin API).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { WebhookConfigSchema } from '../../src/config.js';
import { MemoryWebhookOutbox } from '../../src/stores/memory/webhook-outbox.js';
import { MemoryWebhookStore } from '../../src/stores/memory/webhook-store.js';
import { SecretBox } from '../../src/webhooks/secret-box.js';
import { DeliveryWorker } from '../../src/webhooks/worker.js';
import { webhookRecord } from '../stores/conformance.js';
import { eventually } from '../helpers/webhook-receiver.js';
import { LIVE_ACCOUNTS } from '../helpers/worker-harness.js';

type Line = Record<string, unknown> & { msg: string };

t.test('a receiver answering 503: a backlog\'s attempts write one line at once and an exact count', async (t) => {
  const server = createServer((request, response) => request.resume().on('end', () => response.writeHead(503).end()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const port = (server.address() as AddressInfo).port;

  const lines: Line[] = [];
  const log = pino({ level: 'info' }, { write: (text: string) => void lines.push(JSON.parse(text) as Line) }) as unknown as FastifyBaseLogger;
  const store = new MemoryWebhookStore();
  const outbox = new MemoryWebhookOutbox();
  const box = new SecretBox(randomBytes(32));
  const at = new Date().toISOString();
  await store.set('acme', webhookRecord(`http://127.0.0.1:${port}/in`, box.seal('whsec_dGVzdA=='), at), null);
  const EVENTS = 40;
  for (let i = 0; i < EVENTS; i++) {
    await outbox.enqueue({ eventId: `evt_${i}`, accountId: 'acme', body: JSON.stringify({ type: 'webhook.test', timestamp: at, data: {} }), trace: {} });
  }
  let attempts = 0;
  const worker = new DeliveryWorker({
    outbox,
    store,
    accounts: LIVE_ACCOUNTS,
    box,
    config: WebhookConfigSchema.parse({ allowPrivateTargets: true, workerIntervalMs: 5, perAccountConcurrency: 4 }),
    transport: { resolve: async () => ['127.0.0.1'], allowPrivateTargets: true },
    log,
    onAttempt: () => void (attempts += 1),
  });
  worker.start();
  try {
    await eventually(async () => (attempts >= EVENTS ? true : undefined), 'a first attempt of every event');
  } finally {
    await worker.stop();
  }
  const failed = lines.filter((line) => line.msg.startsWith('webhook delivery attempt failed'));
  const firsts = failed.filter((line) => line.log_summary !== true);
  assert.ok(firsts.length <= 2, `a bounded number of lines, not one per attempt: ${firsts.length} lines for ${attempts} attempts`);
  assert.equal(firsts[0]?.account_id, 'acme');
  assert.equal(firsts[0]?.http_status, 503);
  assert.equal(typeof firsts[0]?.event_id, 'string', 'the first line names its event');
  const accounted = failed.reduce((sum, line) => sum + (line.log_summary === true ? Number(line.repeated) : 1), 0);
  assert.equal(accounted, attempts, 'every failed attempt is accounted for, exactly');
});
