/**
 * W3C Trace Context (Level 1 Recommendation): a request's `traceparent` is validated and, when
 * valid, continued (same trace id, the caller's span as parent); otherwise a new trace starts and
 * `tracestate` is dropped with it, as the spec requires. The gateway's own span id goes to the
 * upstream calls and webhook deliveries made for the request. `traceresponse` is not sent: it is
 * only a draft (Level 2), not part of the Recommendation.
 *
 * The context travels with the request explicitly (`request.trace`, then the handler's call
 * context to the backend and the upstream client, and the webhook events it queues), not in an
 * AsyncLocalStorage: on Node 20 that enables a promise hook for every promise of the process,
 * which cost the hot path more than anything it carried.
 */
import { randomFillSync } from 'node:crypto';

export interface TraceContext {
  /** 32 lowercase hex digits, never all zeros. */
  traceId: string;
  /** This gateway's span for the request: the parent id of every call it makes for it. */
  spanId: string;
  /** The caller's span, when a valid traceparent came in. */
  parentId: string | undefined;
  /** Two hex digits; the caller's flags (sampled bit) are passed on unchanged. */
  flags: string;
  /** The caller's tracestate, passed on as received (only with a valid traceparent). */
  traceState: string | undefined;
}

const HEX = /^[0-9a-f]+$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);
/** Longer tracestate values may be dropped (spec §3.3.1.5: propagate at least 512 characters). */
const MAX_TRACESTATE = 512;
const TRACESTATE_CHARS = /^[\x20-\x7e]*$/;

/**
 * The parts of a valid traceparent, or undefined. Version 00 is exactly 55 characters; a later
 * version is parsed as 00 when its first four fields have the 00 shape (and anything after them is
 * introduced by a dash); version ff is invalid. Uppercase hex is invalid.
 */
export function parseTraceparent(header: string | string[] | undefined): { traceId: string; parentId: string; flags: string } | undefined {
  if (typeof header !== 'string' || header.length < 55) return undefined;
  const version = header.slice(0, 2);
  if (!HEX.test(version) || version === 'ff') return undefined;
  if (version === '00' ? header.length !== 55 : header.length > 55 && header[55] !== '-') return undefined;
  if (header[2] !== '-' || header[35] !== '-' || header[52] !== '-') return undefined;
  const traceId = header.slice(3, 35);
  const parentId = header.slice(36, 52);
  const flags = header.slice(53, 55);
  if (!HEX.test(traceId) || !HEX.test(parentId) || !HEX.test(flags)) return undefined;
  if (traceId === ZERO_TRACE || parentId === ZERO_SPAN) return undefined;
  return { traceId, parentId, flags };
}

/** Random ids from a pooled buffer: one getrandom call per 256 spans, not one per id. */
const pool = Buffer.alloc(8 * 256);
let poolOffset = pool.length;

function randomHex(bytes: 8 | 16): string {
  if (poolOffset + bytes > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const hex = pool.toString('hex', poolOffset, poolOffset + bytes);
  poolOffset += bytes;
  return hex;
}

function validTraceState(header: string | string[] | undefined): string | undefined {
  // Node joins repeated tracestate headers with ", ", which is how the spec combines them.
  if (typeof header !== 'string' || header === '' || header.length > MAX_TRACESTATE) return undefined;
  return TRACESTATE_CHARS.test(header) ? header : undefined;
}

/** The trace a request joins (its traceparent, when valid) or starts. */
export function traceFromHeaders(headers: Record<string, string | string[] | undefined>): TraceContext {
  const parent = parseTraceparent(headers.traceparent);
  const spanId = randomHex(8);
  if (!parent) return { traceId: randomHex(16), spanId, parentId: undefined, flags: '00', traceState: undefined };
  return { traceId: parent.traceId, spanId, parentId: parent.parentId, flags: parent.flags, traceState: validTraceState(headers.tracestate) };
}

/** The headers that carry `trace` to a call made for it (upstream request, webhook delivery). */
export function traceHeaders(trace: TraceContext): Record<string, string> {
  const traceparent = `00-${trace.traceId}-${trace.spanId}-${trace.flags}`;
  return trace.traceState === undefined ? { traceparent } : { traceparent, tracestate: trace.traceState };
}

/**
 * The headers for work done later on behalf of a request (a webhook delivery): made when the work
 * is queued, kept with it, and sent with every attempt. Without a request, a new trace's.
 */
export function captureTraceHeaders(trace: TraceContext | undefined): Record<string, string> {
  return traceHeaders(trace ?? traceFromHeaders({}));
}
