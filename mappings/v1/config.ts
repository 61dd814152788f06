/**
 * Configuration of the v1 passthrough (`upstream.backend: "v1"`): an upstream that speaks this
 * contract itself (an in-house panel, or another gateway). Each account reaches it with its own
 * upstream API key, chosen by the account's upstream id: the upstream sees one customer per key, so
 * no header can make one account act for another.
 */
import { z } from 'zod';
import { CircuitBreakerSchema, UpstreamUrlSchema } from '../../src/upstream/settings.js';

const PositiveInt = z.number().int().positive();
/** Printable ASCII without spaces: the key goes into an HTTP header as it is. */
const ApiKey = z.string().regex(/^[\x21-\x7e]{1,512}$/, 'must be a key of 1 to 512 printable characters without spaces (V1_UPSTREAM_API_KEYS: upstreamId=key,…)');
export const UPSTREAM_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
const UpstreamId = z.string().regex(UPSTREAM_ID, 'must be an account id of the upstream');

/**
 * `V1_UPSTREAM_API_KEYS=acme=rk_…,beta=rk_…` arrives as a list; the file holds an object. An entry
 * that is not `<upstream id>=<key>` is named by its position, never by its text (it may be a bare
 * key): without `=`, with text before the first `=` that is no upstream id, or with nothing but
 * `=` after it (a bare base64 key whose padding was read as the separator).
 */
function keysFromList(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  const entries = value.map((entry, index) => {
    const text = String(entry);
    const at = text.indexOf('=');
    const id = text.slice(0, Math.max(at, 0)).trim();
    const key = text.slice(at + 1).trim();
    return at < 1 || !UPSTREAM_ID.test(id) || /^=*$/.test(key) ? [`entry-${index + 1}`, ''] : [id, key];
  });
  return Object.fromEntries(entries);
}

export const V1ConfigSchema = z.strictObject({
  /** Where the upstream's v1 API lives: requests go to `<url>/v1/…` (a path prefix is kept). */
  url: UpstreamUrlSchema.refine((url) => !/[?#]/.test(url), 'must not carry a query or fragment'),
  /** The upstream API key of each account, by the account's upstream id (`--upstream-id`). */
  apiKeys: z.preprocess(
    keysFromList,
    z.record(UpstreamId, ApiKey).refine((keys) => Object.keys(keys).length > 0, 'must name at least one account\'s key'),
  ),
  /** Deadline of a forwarded read: the whole answer, not only its headers. */
  timeoutMs: PositiveInt.default(15_000),
  /**
   * Deadline of a forwarded write (POST, PUT). Set it above the upstream's own longest write, so
   * that the upstream's answer, not this deadline, decides; a sent write's idempotency settle time follows it.
   */
  writeTimeoutMs: PositiveInt.default(90_000),
  /** A connection that is not up by then fails as unavailable (nothing was sent). */
  connectTimeoutMs: PositiveInt.default(5_000),
  /** A larger answer is dropped (502); invoice PDFs are the largest. */
  maxResponseBytes: PositiveInt.default(4 * 1024 * 1024),
  /** Connections to the upstream. */
  connections: PositiveInt.default(32),
  /**
   * Whether the client's address (as this gateway found it) goes upstream in X-Forwarded-For. On
   * for an upstream of the same operator, which limits and audits by it; off for one run by
   * someone else, which then learns nothing of the clients and counts every account against this
   * gateway's one address (raise its source-IP limit for that address).
   */
  forwardClientAddress: z.boolean().default(true),
  /** See CircuitBreakerSchema: the same rules and defaults as the mapped backends. */
  circuitBreaker: CircuitBreakerSchema,
});

export type V1Config = z.infer<typeof V1ConfigSchema>;
