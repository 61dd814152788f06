/**
 * An account's parked events are swept in `sweepAfterMs` after the first of
 * them waited (webhook-enqueue.lua marks the account once, ZADD NX), whatever comes after. Were
 * each new event to push the mark back, an account whose entries an instance of the previous
 * release finished (no admission follows) and whose events keep coming would never be swept: its
 * line would wait for as long as its events kept coming.
 */
import assert from 'node:assert/strict';
import { Redis } from 'ioredis';
import t from 'tap';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { startRedisServer } from '../helpers/redis.js';
import { unique } from '../stores/conformance.js';

const entry = (eventId: string) => ({ eventId, accountId: 'acme', body: '{}', trace: {} });

t.test("later events of a waiting account do not move its sweep mark", async (t) => {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  const prefix = `${unique('sweep')}:`;
  const stores = await createRedisStores({ url: redis.url, keyPrefix: prefix, webhookAdmission: { perAccount: 1, maxWaiting: 100, sweepAfterMs: 30_000 } });
  t.teardown(() => stores.close());
  const inspector = new Redis(redis.url);
  t.teardown(() => inspector.disconnect());
  const mark = () => inspector.zscore(`${prefix}{webhooks}:parked-accounts`, 'acme');

  await stores.webhookOutbox.enqueue(entry('evt_1'));
  assert.equal(await mark(), null, 'admitted: nothing waits');
  await stores.webhookOutbox.enqueue(entry('evt_2'));
  const first = await mark();
  assert.ok(first !== null, 'the first to wait marks the account');
  // Redis TIME moves on between the calls; a mark that followed it would change.
  await new Promise((resolve) => setTimeout(resolve, 5));
  await stores.webhookOutbox.enqueue(entry('evt_3'));
  assert.equal(await mark(), first, 'kept from the first');
});
