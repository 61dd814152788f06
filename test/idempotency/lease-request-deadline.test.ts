/**
 * The idempotency claim's lease under the request's deadline: no request works past
 * requestDeadlineMs (each upstream call ends by then, none is sent after), so a claim whose holder
 * died before its write was marked (a crash, a kill past the shutdown grace) frees its key once
 * that deadline and the lease margin have passed. Before, the lease followed the backend's longest
 * write (155 s on WHMCS's defaults, above the 120 s default deadline): the client's retries got
 * 409 idempotency_in_progress for minutes after the request could have run at all. A sent write
 * still settles for the write timeout (the upstream may still be working on it).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { IdempotencyConfigSchema } from '../../src/config.js';
import { ApiError } from '../../src/errors.js';
import { Idempotency, type IdempotentRun } from '../../src/http/idempotency.js';
import { MemoryIdempotencyStore } from '../../src/stores/memory/idempotency-store.js';

const WRITE_TIMEOUT_MS = 155_000;
const REQUEST_DEADLINE_MS = 30_000;
const log = { error: () => undefined };

function order(execute: IdempotentRun['execute']): IdempotentRun {
  return {
    accountId: 'acme',
    key: 'k-1',
    method: 'POST',
    route: '/v1/orders',
    params: {},
    body: { product_id: '1' },
    execute,
    render: (error) => ({ status: error.status, headers: {}, body: error.detail }),
  };
}

t.test('a claim left by a holder that died before its write frees the key after the request deadline and the margin', async () => {
  let clock = 1_000_000;
  const store = new MemoryIdempotencyStore({ now: () => clock });
  const config = { profile: 'A' as const, idempotency: IdempotencyConfigSchema.parse({ leaseMarginMs: 5_000 }), requestDeadlineMs: REQUEST_DEADLINE_MS };
  const idempotency = new Idempotency(store, config, WRITE_TIMEOUT_MS);
  // The holder never returns: its process died while it read, before any write.
  void idempotency.run(order(() => new Promise(() => undefined)), (e) => e as ApiError, log);
  await new Promise((resolve) => setImmediate(resolve));

  clock += REQUEST_DEADLINE_MS + 5_000 + 1;
  const retry = await idempotency.run(order(async () => ({ status: 201, headers: {}, body: 'placed' })), (e) => e as ApiError, log).then(
    (outcome) => outcome.response.status,
    (error: unknown) => (error instanceof ApiError ? error.reason : String(error)),
  );
  assert.equal(retry, 201, 'the retry after the request deadline runs');
  assert.equal(idempotency.settleMs, WRITE_TIMEOUT_MS + 5_000, 'a sent write still settles for the write timeout');
});
