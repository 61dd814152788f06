/** A stand-in for the transport: answers from the recorded fixtures, records every call. */
import assert from 'node:assert/strict';
import type { Backend, Customer } from '../../../src/backend/backend.js';
import { BackendError } from '../../../src/backend/backend.js';
import { createFossbillingBackend } from '../../../mappings/fossbilling/backend.js';
import { FossbillingConfigSchema } from '../../../mappings/fossbilling/config.js';
import type { FossbillingMethod } from '../../../mappings/fossbilling/methods.js';
import type { UpstreamCallContext } from '../../../src/upstream/client.js';
import { FossbillingError } from '../../../mappings/fossbilling/transport.js';

export const CUSTOMER: Customer = { accountId: 'acct_1', upstreamId: '1' };
export const OTHER_CUSTOMER: Customer = { accountId: 'acct_2', upstreamId: '2' };
/** A read's context, and a write's: its write-ahead step records nothing here. */
export const CTX = { requestId: 'req-1', beforeWrite: async () => undefined };
/** One use of an Idempotency-Key: the tag written upstream is `account:key:record`. */
export const keyed = (idempotencyKey: string, idempotencyRecord = 'rec-1') => ({ ...CTX, idempotencyKey, idempotencyRecord });

type Answer = unknown | ((params: Record<string, unknown>) => unknown);

export class FakeCall {
  readonly calls: Array<{ method: string; params: Record<string, unknown>; context: UpstreamCallContext | undefined }> = [];
  private readonly answers = new Map<string, Answer>();

  answer(method: string, answer: Answer): this {
    this.answers.set(method, answer);
    return this;
  }

  /** FOSSBilling's error envelope, as the transport turns it into an error. */
  static error(message: string, code = 9999): FossbillingError {
    return new FossbillingError(code, message, `FOSSBilling: error ${code}: ${message}`);
  }

  readonly call = async (method: FossbillingMethod, params: Readonly<Record<string, unknown>>, context?: UpstreamCallContext): Promise<unknown> => {
    this.calls.push({ method, params: { ...params }, context });
    if (!this.answers.has(method)) throw new Error(`unexpected call ${method}`);
    const answer = this.answers.get(method);
    const value = typeof answer === 'function' ? (answer as (p: Record<string, unknown>) => unknown)(params) : answer;
    if (value instanceof Error) throw value;
    return structuredClone(value);
  };

  methods(): string[] {
    return this.calls.map((entry) => entry.method);
  }
}

export function backendWith(fake: FakeCall, overrides: Record<string, unknown> = {}): Backend {
  const config = FossbillingConfigSchema.parse({ url: 'http://fossbilling.test', apiToken: 'token-secret', ...overrides });
  return createFossbillingBackend(config, { call: fake.call });
}

export async function rejectsWith(work: Promise<unknown>, kind: BackendError['kind'], detail?: RegExp): Promise<BackendError> {
  const error = await work.then(
    () => assert.fail('expected a failure'),
    (reason: unknown) => reason,
  );
  assert.ok(error instanceof BackendError, `expected a BackendError, got ${String(error)}`);
  assert.equal(error.kind, kind, `kind (${error.operatorMessage ?? error.detail})`);
  if (detail) assert.match(error.detail, detail);
  return error;
}
