/**
 * A delivery worker over memory stores for tests of what it decides after an attempt: one endpoint
 * per path on a loopback server, each with its own answer, one event queued (and logged) for each,
 * under a still clock so that every delay and age is exact.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import pino from 'pino';
import { WebhookConfigSchema } from '../../src/config.js';
import { MemoryWebhookOutbox } from '../../src/stores/memory/webhook-outbox.js';
import { MemoryWebhookStore } from '../../src/stores/memory/webhook-store.js';
import type { AccountRecord } from '../../src/stores/types.js';
import type { DeliveryLogEntry, WebhookRecord } from '../../src/stores/webhook-types.js';
import { SecretBox } from '../../src/webhooks/secret-box.js';
import { DeliveryWorker, type DeliveryWorkerOptions } from '../../src/webhooks/worker.js';
import { webhookRecord } from '../stores/conformance.js';
import { eventually } from './webhook-receiver.js';

/** Path → the endpoint's answer: its status, and a Retry-After when given. */
/** Every account asked for exists and is enabled (an account that is not is deleted: its events are dropped). */
export const LIVE_ACCOUNTS = {
  getAccount: async (id: string): Promise<AccountRecord> => ({ id, name: id, upstreamId: '1', createdAt: '2026-01-01T00:00:00.000Z' }),
};

export type EndpointAnswers = Record<string, [status: number, retryAfter?: string]>;

export interface HarnessOptions {
  now: number;
  /** Webhook settings over `allowPrivateTargets` and a 20 ms worker interval. */
  settings?: Record<string, unknown>;
  /** The endpoint's record as stored for a path (default: enabled, nothing delivered yet). */
  record?: (path: string, record: WebhookRecord) => WebhookRecord;
  /** More of the worker's options (`random`, `onDisabled`, `log`, …). */
  worker?: Partial<DeliveryWorkerOptions>;
}

/**
 * Runs a worker until each path's event has had its first attempt (or was dropped unsent), stops
 * it, and returns the store (records and the delivery log) and each event's log entry after that.
 */
export async function firstAttempts(t: Test, answers: EndpointAnswers, options: HarnessOptions) {
  const server = createServer((request, response) => {
    const [status, retryAfter] = answers[request.url ?? ''] ?? [404];
    request.resume().on('end', () => response.writeHead(status, retryAfter === undefined ? {} : { 'retry-after': retryAfter }).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const port = (server.address() as AddressInfo).port;

  const store = new MemoryWebhookStore();
  const outbox = new MemoryWebhookOutbox();
  const box = new SecretBox(randomBytes(32));
  const at = new Date(options.now).toISOString();
  const worker = new DeliveryWorker({
    outbox,
    store,
    accounts: LIVE_ACCOUNTS,
    box,
    config: WebhookConfigSchema.parse({ allowPrivateTargets: true, workerIntervalMs: 20, ...options.settings }),
    transport: { resolve: async () => ['127.0.0.1'], allowPrivateTargets: true },
    log: pino({ level: 'silent' }),
    now: () => options.now,
    ...options.worker,
  });
  const eventOf = (path: string) => `evt_${path.slice(1)}`;
  for (const path of Object.keys(answers)) {
    const record = webhookRecord(`http://127.0.0.1:${port}${path}`, box.seal('whsec_dGVzdA=='), at);
    await store.set(path, options.record ? options.record(path, record) : record, null);
    const body = JSON.stringify({ type: 'webhook.test', timestamp: at, data: {} });
    await outbox.enqueue({ eventId: eventOf(path), accountId: path, body, trace: {} });
    await store.logDelivery(path, { eventId: eventOf(path), type: 'webhook.test', state: 'pending', attempts: 0, lastStatus: null, lastAttemptAt: null, nextAttemptAt: null, createdAt: at, body }, 10);
  }
  worker.start();
  try {
    const entries = await eventually(async () => {
      const found: Record<string, DeliveryLogEntry> = {};
      for (const path of Object.keys(answers)) {
        const logged = await store.getDelivery(path, eventOf(path));
        // Attempted, or ended without one (dropped unsent).
        if (logged && (logged.attempts > 0 || logged.state !== 'pending')) found[path] = logged;
      }
      return Object.keys(found).length === Object.keys(answers).length ? found : undefined;
    }, 'a first attempt for every endpoint');
    return { store, port, entries };
  } finally {
    await worker.stop();
  }
}
