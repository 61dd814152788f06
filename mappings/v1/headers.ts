/**
 * The headers of a forwarded request, built from nothing rather than filtered from the client's:
 * the client's Authorization, cookies, forwarding and hop-by-hop headers never leave, whatever
 * their spelling. What goes: this account's own upstream key, its upstream id, this gateway's
 * request id and trace context, the client's address as this gateway found it (unless turned off),
 * the namespaced Idempotency-Key, and the body's type and length.
 */
import { createHash } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/** Names the account on the upstream, for its logs; the key alone decides what it may see. */
export const UPSTREAM_ACCOUNT_HEADER = 'x-upstream-account';

export interface ForwardedIdentity {
  apiKey: string;
  upstreamId: string;
  requestId: string;
  /**
   * The client's address as this gateway found it (src/http/source-address.ts), never the client's
   * own X-Forwarded-For: an upstream that trusts this gateway limits and audits by it, instead of
   * counting every account against this gateway's one address. Undefined: not sent
   * (`forwardClientAddress: false`).
   */
  clientAddress: string | undefined;
  /** `traceparent` (and `tracestate`) with this gateway's span as the parent. */
  trace: Record<string, string> | undefined;
  /** Already namespaced (upstreamIdempotencyKey). */
  idempotencyKey: string | undefined;
}

/**
 * The Idempotency-Key sent upstream for an account's key and its record: the same across the
 * retries of one use (so the upstream deduplicates them too), new for a use after the record
 * expired, and never equal for two accounts (one upstream key may serve several).
 */
export function upstreamIdempotencyKey(accountId: string, key: string, recordId: string): string {
  return `gw.${createHash('sha256').update(`${accountId}\n${key}\n${recordId}`).digest('hex')}`;
}

/**
 * `prepared`: what reply-from computed (host, and for a write the body's type and length); nothing
 * else of it is used. A read has no body: its type and length there are the client's, left behind.
 */
export function upstreamHeaders(prepared: IncomingHttpHeaders, who: ForwardedIdentity, withBody: boolean): Record<string, string> {
  const headers: Record<string, string> = {
    accept: 'application/json, application/problem+json, application/pdf',
    authorization: `Bearer ${who.apiKey}`,
    [UPSTREAM_ACCOUNT_HEADER]: who.upstreamId,
    'x-request-id': who.requestId,
    'user-agent': 'reseller-gateway',
    ...who.trace,
  };
  if (who.clientAddress !== undefined) headers['x-forwarded-for'] = who.clientAddress;
  for (const name of withBody ? (['host', 'content-type', 'content-length'] as const) : (['host'] as const)) {
    const value = prepared[name];
    if (value !== undefined) headers[name] = String(value);
  }
  if (who.idempotencyKey !== undefined) headers['idempotency-key'] = who.idempotencyKey;
  return headers;
}
