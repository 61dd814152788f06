/**
 * What every mapping says to clients when the upstream fails (generic `detail` texts: the upstream's
 * own words only ever reach `operatorMessage`), and helpers to describe an unreadable answer for
 * the operator without leaking what it held.
 */
import { BackendError } from '../backend/backend.js';
import type { UpstreamAction } from './policy.js';

export const DETAIL = {
  refused: 'The billing system refused the gateway.',
  unreadable: 'The billing system answered with something unreadable.',
  business: 'The billing system reported an error.',
  unreachable: 'The billing system could not be reached.',
  timeout: 'The billing system did not answer in time.',
  broken: 'The connection to the billing system broke.',
} as const;

/** Removes credentials (and anything else secret) from text bound for the logs. */
export type Redact = (text: string) => string;

/** What an unreadable body looked like. JSON is never quoted: it may hold a service password. */
export function excerpt(body: Buffer, redact: Redact): string {
  const start = body.subarray(0, 400).toString('utf8').replace(/^\uFEFF/, '').replace(/\s+/g, ' ').trim();
  if (/^[[{"]/.test(start)) return `${body.length} bytes of JSON-like text`;
  return `"${redact(start.slice(0, 200))}"`;
}

/** An answer we cannot read; from a write it may hide a half-done action. */
export function unreadableAnswer(
  label: string,
  action: UpstreamAction,
  why: string,
  redact: Redact,
  outcomeUnknown = action.safety === 'write',
): BackendError {
  return new BackendError('upstream_error', DETAIL.unreadable, { operatorMessage: redact(`${label} ${action.name}: ${why}`), outcomeUnknown });
}

/** Once a write has succeeded, any later failure leaves its effect in place: say so. */
export async function afterWrite<T>(work: Promise<T>, what: string): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (!(error instanceof BackendError)) throw error;
    throw new BackendError(error.kind, error.detail, {
      operatorMessage: `${error.operatorMessage ?? error.detail} (after ${what} had succeeded)`,
      outcomeUnknown: true,
      ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
      cause: error,
    });
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parses a JSON body (a UTF-8 BOM tolerated); undefined when it is not JSON. */
export function parseJsonBody(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8').replace(/^\uFEFF/, ''));
  } catch {
    return undefined;
  }
}
