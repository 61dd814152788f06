/** The stores of one gateway instance kept in process memory: sandbox mode and tests. */
import type { Stores } from '../types.js';
import type { OutboxAdmission } from '../webhook-types.js';
import { FileKeyStore } from './file-key-store.js';
import { MemoryIdempotencyStore } from './idempotency-store.js';
import { MemoryKeyStore } from './key-store.js';
import { MemoryRateLimitStore } from './rate-limit-store.js';
import { MemoryWebhookOutbox } from './webhook-outbox.js';
import { MemoryWebhookStore } from './webhook-store.js';

export { FileKeyStore } from './file-key-store.js';
export type { FileKeyStoreOptions } from './file-key-store.js';
export { MemoryIdempotencyStore } from './idempotency-store.js';
export type { MemoryIdempotencyStoreOptions } from './idempotency-store.js';
export { MemoryKeyStore } from './key-store.js';
export { MemoryRateLimitStore } from './rate-limit-store.js';
export type { MemoryRateLimitStoreOptions } from './rate-limit-store.js';
export { MemoryWebhookStore } from './webhook-store.js';
export { MemoryWebhookOutbox } from './webhook-outbox.js';

export interface MemoryStoresOptions {
  now?: () => number;
  /** Keep accounts and keys in this JSON file (shared with the operator CLI); absent: in memory only. */
  keysFile?: string;
  /** MemoryIdempotencyStoreOptions.maxRecords. */
  idempotencyMaxRecords?: number | undefined;
  /** webhooks.perAccountConcurrency and maxWaitingPerAccount: an account's outbox entries claimable at once, and waiting behind them. */
  webhookAdmission?: OutboxAdmission | undefined;
}

export function createMemoryStores(options: MemoryStoresOptions = {}): Stores {
  const { now } = options;
  const fileKeys = options.keysFile ? new FileKeyStore(options.keysFile, { now }) : undefined;
  return {
    kind: 'memory',
    rateLimits: new MemoryRateLimitStore({ now }),
    idempotency: new MemoryIdempotencyStore({ now, maxRecords: options.idempotencyMaxRecords }),
    keys: fileKeys ?? new MemoryKeyStore(),
    webhooks: new MemoryWebhookStore(now),
    webhookOutbox: new MemoryWebhookOutbox(now, options.webhookAdmission),
    ping: async () => true,
    close: async () => fileKeys?.close(),
  };
}
