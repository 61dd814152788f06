/**
 * Auto-disable (reference W9): an endpoint that answers 410, or whose deliveries have all failed for
 * `disableAfterMs`, is disabled with its reason recorded (the reseller reads it on GET /v1/webhooks)
 * and the operator told (the metric, the log line); its event is dropped, not retried.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import pino from 'pino';
import { WebhookConfigSchema } from '../../src/config.js';
import { MemoryWebhookOutbox } from '../../src/stores/memory/webhook-outbox.js';
import { MemoryWebhookStore } from '../../src/stores/memory/webhook-store.js';
import type { WebhookDisabledReason } from '../../src/stores/webhook-types.js';
import { SecretBox } from '../../src/webhooks/secret-box.js';
import { DeliveryWorker } from '../../src/webhooks/worker.js';
import { webhookRecord } from '../stores/conformance.js';
import { eventually } from '../helpers/webhook-receiver.js';

const NOW = Date.parse('2026-03-10T12:00:00.000Z');
const DAY = 86_400_000;

t.test('an endpoint is disabled for answering 410 or for failing too long, never for one failure', async (t) => {
  /** Path → its status, and since when its deliveries have been failing (null: they were not). */
  const endpoints: Record<string, [status: number, failingSince: number | null]> = {
    '/gone': [410, null],
    '/failing': [500, NOW - 6 * DAY],
    '/failing-briefly': [500, NOW - 4 * DAY],
    '/failing-now': [500, null],
  };
  const server = createServer((request, response) => {
    const [status] = endpoints[request.url ?? ''] ?? [404];
    request.resume().on('end', () => response.writeHead(status).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const port = (server.address() as AddressInfo).port;

  const store = new MemoryWebhookStore();
  const outbox = new MemoryWebhookOutbox();
  const box = new SecretBox(randomBytes(32));
  const disabled: WebhookDisabledReason[] = [];
  const logs: string[] = [];
  const worker = new DeliveryWorker({
    outbox,
    store,
    box,
    config: WebhookConfigSchema.parse({ allowPrivateTargets: true, workerIntervalMs: 20, disableAfterMs: 5 * DAY }),
    transport: { resolve: async () => ['127.0.0.1'], allowPrivateTargets: true },
    log: pino({ level: 'info' }, { write: (line: string) => void logs.push(line) }),
    onDisabled: (reason) => disabled.push(reason),
    now: () => NOW,
  });
  for (const [path, [, failingSince]] of Object.entries(endpoints)) {
    const record = webhookRecord(`http://127.0.0.1:${port}${path}`, box.seal('whsec_dGVzdA=='), new Date(NOW - 7 * DAY).toISOString());
    await store.set(path, { ...record, failingSince: failingSince === null ? null : new Date(failingSince).toISOString() });
    const body = JSON.stringify({ type: 'webhook.test', timestamp: new Date(NOW).toISOString(), data: {} });
    await outbox.enqueue({ eventId: `evt_${path.slice(1)}`, accountId: path, body, trace: {} });
    await store.logDelivery(path, { eventId: `evt_${path.slice(1)}`, type: 'webhook.test', state: 'pending', attempts: 0, lastStatus: null, lastAttemptAt: null, nextAttemptAt: null, createdAt: new Date(NOW).toISOString(), body }, 10);
  }
  worker.start();
  const states = await eventually(async () => {
    const found: Record<string, string> = {};
    for (const path of Object.keys(endpoints)) {
      const logged = await store.getDelivery(path, `evt_${path.slice(1)}`);
      if (logged && logged.attempts > 0) found[path] = logged.state;
    }
    return Object.keys(found).length === Object.keys(endpoints).length ? found : undefined;
  }, 'a first attempt for every endpoint');
  await worker.stop();

  assert.deepEqual(states, { '/gone': 'dropped', '/failing': 'dropped', '/failing-briefly': 'pending', '/failing-now': 'pending' });
  const status = async (path: string) => {
    const record = await store.get(path);
    return record && [record.status, record.disabledReason];
  };
  assert.deepEqual(await status('/gone'), ['disabled', 'gone']);
  assert.deepEqual(await status('/failing'), ['disabled', 'failing']);
  assert.deepEqual(await status('/failing-briefly'), ['enabled', null]);
  assert.deepEqual(await status('/failing-now'), ['enabled', null]);
  assert.deepEqual(disabled.sort(), ['failing', 'gone'], 'the operator is told of each, with its reason');
  const warned = logs.map((line) => JSON.parse(line)).filter((line) => line.msg === 'webhook endpoint disabled');
  assert.deepEqual(warned.map((line) => line.reason).sort(), ['failing', 'gone']);
  assert.ok(warned.every((line) => line.level === 40 && line.url_host === `127.0.0.1:${port}`));

  // Enabling it again (the admin API's enable) clears the reason; PUT /v1/webhooks sets a new record, without one.
  assert.deepEqual(await store.enable('/gone').then((record) => record && [record.status, record.disabledReason]), ['enabled', null]);
});
