/**
 * A change detector over a webhook store of the test's, one account with an enabled endpoint, a
 * backend of the test's, and a memory outbox whose queued events the test reads.
 */
import pino from 'pino';
import type { Backend } from '../../src/backend/backend.js';
import { MemoryWebhookOutbox } from '../../src/stores/memory/webhook-outbox.js';
import type { AccountRecord, KeyStore } from '../../src/stores/types.js';
import type { WebhookStore } from '../../src/stores/webhook-types.js';
import { ChangeDetector } from '../../src/webhooks/detector.js';
import { WebhookEvents } from '../../src/webhooks/emitter.js';
import { webhookRecord } from '../stores/conformance.js';

export const ACCOUNT = 'acme';

export async function detectorOver(store: WebhookStore, backend: unknown) {
  await store.set(ACCOUNT, webhookRecord('https://hooks.example.com/in', 'sealed', new Date().toISOString()), null);
  const outbox = new MemoryWebhookOutbox();
  const log = pino({ level: 'silent' });
  const events = new WebhookEvents(store, outbox, log);
  const account: AccountRecord = { id: ACCOUNT, name: 'Acme', upstreamId: '1', createdAt: new Date().toISOString() };
  const keys = { listAccounts: async () => [account] } as unknown as KeyStore;
  const detector = new ChangeDetector({ backend: backend as Backend, keys, store, events, pollIntervalMs: 60_000, log });
  /**
   * The events queued since the last call, as `type resource-id`, in the order queued: claimed and
   * delivered until none is left (an account's share is claimable at a time, the rest move up as
   * its deliveries end).
   */
  const queued = async (): Promise<string[]> => {
    const claimed = [];
    for (let batch = await outbox.claim('test', 10_000, 60_000); batch.length > 0; batch = await outbox.claim('test', 10_000, 60_000)) {
      for (const delivery of batch) await outbox.complete(delivery, 'delivered');
      claimed.push(...batch);
    }
    return claimed.map((delivery) => {
      const { type, data } = JSON.parse(delivery.body) as { type: string; data: { id: string } };
      return `${type} ${data.id}`;
    });
  };
  return { events, detector, queued, account };
}
