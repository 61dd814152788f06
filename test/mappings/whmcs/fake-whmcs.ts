/**
 * A scripted WHMCS for the mapping tests: an undici MockAgent (network disabled) that answers per
 * action and records every request body, injected into the backend as its dispatcher.
 */
import assert from 'node:assert/strict';
import { MockAgent } from 'undici';
import { BackendError, type Customer, type WriteContext } from '../../../src/backend/backend.js';
import { createWhmcsBackend } from '../../../mappings/whmcs/backend.js';
import { type WhmcsConfig, WhmcsConfigSchema } from '../../../mappings/whmcs/config.js';

export const ORIGIN = 'https://billing.example.test';
export const API_PATH = '/whmcs/includes/api.php';
export const CREDENTIALS = { identifier: 'gw-ident-7Q2x', secret: 'gw-secret-9xZ!&=', accessKey: 'acc-key-4@#' };
/** The password in the recorded GetClientsProducts answer. */
export const SERVICE_PASSWORD = 'Plaintext-Decrypted';

export const CUSTOMER: Customer = { accountId: 'acme', upstreamId: '1' };
export const OTHER_CUSTOMER: Customer = { accountId: 'beta', upstreamId: '2' };
export const CTX: WriteContext = { requestId: 'req-1', beforeWrite: async () => undefined };

export function testConfig(overrides: Record<string, unknown> = {}): WhmcsConfig {
  return WhmcsConfigSchema.parse({ url: `${ORIGIN}/whmcs/`, ...CREDENTIALS, publicProductIds: ['1', '2', '3', '4'], ...overrides });
}

/** What WHMCS answers: a raw string, a JSON value, or one made from the request's parameters. */
export type Answer = string | object | ((params: URLSearchParams) => unknown);

export interface AnswerOptions {
  status?: number;
  /** Answer only this many times (default: every time). */
  times?: number;
  delayMs?: number;
}

export interface LogLine {
  level: 'info' | 'warn' | 'error';
  obj: object;
  msg: string;
}

const actionOf = (body: string): string | null => new URLSearchParams(body).get('action');

export class FakeWhmcs {
  readonly agent = new MockAgent({ enableCallHistory: true });
  readonly logs: LogLine[] = [];
  readonly logger = {
    info: (obj: object, msg: string) => this.logs.push({ level: 'info', obj, msg }),
    warn: (obj: object, msg: string) => this.logs.push({ level: 'warn', obj, msg }),
    error: (obj: object, msg: string) => this.logs.push({ level: 'error', obj, msg }),
  };

  constructor() {
    this.agent.disableNetConnect();
  }

  /** Answers `action` with a body, or with what `respond` makes of the request's parameters. */
  answer(action: string, body: Answer, options: AnswerOptions = {}): this {
    const scope = this.agent
      .get(ORIGIN)
      .intercept({ path: API_PATH, method: 'POST', body: (sent) => actionOf(sent) === action })
      .reply((request) => {
        const payload = typeof body === 'function' ? (body as (params: URLSearchParams) => unknown)(new URLSearchParams(String(request.body))) : body;
        return {
          statusCode: options.status ?? 200,
          data: typeof payload === 'string' ? payload : JSON.stringify(payload),
          responseOptions: { headers: { 'content-type': 'application/json' } },
        };
      });
    if (options.delayMs !== undefined) scope.delay(options.delayMs);
    if (options.times === undefined) scope.persist();
    else scope.times(options.times);
    return this;
  }

  /** The connection is refused: the request never leaves (undici's mock fails it before connecting). */
  refuse(action: string, options: { times?: number } = {}): this {
    const refused = Object.assign(new Error('connect ECONNREFUSED 192.0.2.1:443'), { code: 'ECONNREFUSED' });
    const scope = this.agent
      .get(ORIGIN)
      .intercept({ path: API_PATH, method: 'POST', body: (sent) => actionOf(sent) === action })
      .replyWithError(refused);
    if (options.times === undefined) scope.persist();
    else scope.times(options.times);
    return this;
  }

  /** Parameters of every request sent (optionally of one action), in order. */
  requests(action?: string): URLSearchParams[] {
    const calls = this.agent.getCallHistory()?.calls() ?? [];
    return calls
      .map((call) => new URLSearchParams(String(call.body)))
      .filter((params) => action === undefined || params.get('action') === action);
  }

  actions(): string[] {
    return this.requests().map((params) => params.get('action') ?? '');
  }

  backend(overrides: Record<string, unknown> = {}) {
    return createWhmcsBackend(testConfig(overrides), { dispatcher: this.agent, logger: this.logger });
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

/** Awaits a rejection with a BackendError of `kind`, checks nothing secret leaks, and returns it. */
export async function rejectsWith(work: Promise<unknown>, kind: BackendError['kind']): Promise<BackendError> {
  const error = await work.then(
    () => assert.fail(`expected a ${kind} BackendError`),
    (reason: unknown) => reason,
  );
  assert.ok(error instanceof BackendError, `expected a BackendError, got ${String(error)}`);
  assert.equal(error.kind, kind, `kind (${error.detail} / ${error.operatorMessage ?? ''})`);
  assertNoSecrets(error);
  return error;
}

/** Neither the client-facing detail nor the log text may carry a credential or a password. */
export function assertNoSecrets(error: BackendError): void {
  for (const text of [error.detail, error.message, error.operatorMessage ?? '']) {
    for (const secret of [CREDENTIALS.identifier, CREDENTIALS.secret, CREDENTIALS.accessKey, SERVICE_PASSWORD]) {
      assert.ok(!text.includes(secret), `"${text}" leaks a secret`);
      assert.ok(!text.includes(encodeURIComponent(secret)), `"${text}" leaks an encoded secret`);
    }
  }
}
