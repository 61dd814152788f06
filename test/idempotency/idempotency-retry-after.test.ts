/**
 * Retry-After on the idempotency refusals is rounded up to whole seconds: a client that waits what
 * it is told must not come back before the lease or the settle time has run out (a 409
 * idempotency_in_progress or a 503 outcome_unknown again). 1.5 s is "2", never "1".
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { IdempotencyConfigSchema } from '../../src/config.js';
import { ApiError } from '../../src/errors.js';
import { Idempotency, type IdempotentRun } from '../../src/http/idempotency.js';
import type { BeginResult, IdempotencyStore } from '../../src/stores/types.js';

const log = { error: () => undefined };

function storeAnswering(claim: BeginResult): IdempotencyStore {
  const nothing = async () => undefined;
  return {
    begin: async () => claim,
    complete: nothing,
    release: nothing,
    markUnknown: nothing,
    markSent: async () => true,
    unmarkSent: nothing,
  } as unknown as IdempotencyStore;
}

function run(execute: IdempotentRun['execute']): IdempotentRun {
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

async function refusal(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  assert.fail('expected a refusal');
}

t.test('409 idempotency_in_progress: Retry-After is the store\'s wait, rounded up', async () => {
  const idempotency = new Idempotency(storeAnswering({ kind: 'in_progress', retryAfterMs: 1_500 }), { profile: 'A', idempotency: IdempotencyConfigSchema.parse({}) }, 1_000);
  const error = await refusal(idempotency.run(run(async () => assert.fail('must not run')), (e) => e as ApiError, log));
  assert.equal(error.reason, 'idempotency_in_progress');
  assert.equal(error.headers?.['retry-after'], '2');
});

t.test('503 outcome_unknown: Retry-After is the settle time, rounded up', async () => {
  const config = { profile: 'A' as const, idempotency: IdempotencyConfigSchema.parse({ settleMs: 2_500 }) };
  const idempotency = new Idempotency(storeAnswering({ kind: 'acquired', token: 't', recordId: 'r', sentAt: 1 }), config, 1_000);
  const error = await refusal(
    idempotency.run(
      run(async (attempt) => {
        throw attempt.outcomeUnknown('the earlier order cannot be found or ruled out');
      }),
      (e) => e as ApiError,
      log,
    ),
  );
  assert.equal(error.reason, 'outcome_unknown');
  assert.equal(error.headers?.['retry-after'], '3');
});
