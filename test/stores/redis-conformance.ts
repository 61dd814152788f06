/**
 * Every store conformance suite over Redis stores, standalone or cluster: one list, so that a suite
 * added for one also runs on the other. Each test gets stores under its own key prefix, so lists
 * start empty.
 */
import type { Test } from 'tap';
import type { RedisStoresOptions } from '../../src/stores/redis/index.js';
import type { Stores } from '../../src/stores/types.js';
import {
  realClock,
  runIdempotencyConformance,
  runKeyStoreConformance,
  runRateLimitConformance,
  runWebhookConformance,
  unique,
  type FixtureFactory,
} from './conformance.js';
import { runOutboxConformance, runWebhookStateConformance, WAITING_BOUND } from './webhook-conformance.js';

/** `open`: stores under `keyPrefix`, with the outbox's admission the suite expects. */
export function runRedisConformance(
  t: Test,
  name: string,
  open: (keyPrefix: string, webhookAdmission: RedisStoresOptions['webhookAdmission']) => Promise<Stores>,
): void {
  const admission = { perAccount: 2, sweepAfterMs: 30_000, maxWaiting: WAITING_BOUND };
  const fixture =
    <S>(pick: (stores: Stores) => S): FixtureFactory<S> =>
    async () => {
      const stores = await open(`${unique('test')}:`, admission);
      return { store: pick(stores), clock: realClock, close: () => stores.close() };
    };
  runRateLimitConformance(t, name, fixture((stores) => stores.rateLimits));
  runIdempotencyConformance(t, name, fixture((stores) => stores.idempotency));
  runKeyStoreConformance(t, name, fixture((stores) => stores.keys));
  runWebhookConformance(t, name, fixture((stores) => stores.webhooks));
  runWebhookStateConformance(t, name, fixture((stores) => stores.webhooks));
  runOutboxConformance(t, name, fixture((stores) => stores.webhookOutbox));
}
