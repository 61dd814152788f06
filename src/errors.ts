/**
 * The closed table of failure reasons (contract §2). Every error the gateway answers with is one of
 * these; the status and title come from here and nowhere else.
 */
export const REASONS = {
  invalid_request: { status: 400, title: 'Invalid request' },
  idempotency_key_missing: { status: 400, title: 'Idempotency-Key header is required' },
  idempotency_key_invalid: { status: 400, title: 'Idempotency-Key header is invalid' },
  unauthenticated: { status: 401, title: 'Authentication required' },
  insufficient_scope: { status: 403, title: 'The key lacks the required scope' },
  not_found: { status: 404, title: 'Not found' },
  method_not_allowed: { status: 405, title: 'Method not allowed' },
  request_timeout: { status: 408, title: 'Request timeout' },
  idempotency_conflict: { status: 409, title: 'Idempotency-Key reused with another request' },
  idempotency_in_progress: { status: 409, title: 'A request with this Idempotency-Key is in progress' },
  action_not_allowed: { status: 409, title: 'Action not allowed in the current state' },
  replay_stale: { status: 410, title: 'Idempotency-Key has expired' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  uri_too_long: { status: 414, title: 'URI too long' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  expectation_failed: { status: 417, title: 'Expectation failed' },
  invalid_action: { status: 422, title: 'Invalid action' },
  validation_failed: { status: 422, title: 'Validation failed' },
  rate_limited: { status: 429, title: 'Rate limit exceeded' },
  headers_too_large: { status: 431, title: 'Request header fields too large' },
  internal_error: { status: 500, title: 'Internal error' },
  renderer_out_of_memory: { status: 500, title: 'Invoice PDF too large to render' },
  upstream_error: { status: 502, title: 'Upstream error' },
  upstream_unavailable: { status: 503, title: 'Upstream unavailable' },
  store_unavailable: { status: 503, title: 'Store unavailable' },
  outcome_unknown: { status: 503, title: 'Outcome of an earlier attempt is unknown' },
  backend_misconfigured: { status: 503, title: 'Backend misconfigured' },
  renderer_busy: { status: 503, title: 'Invoice PDF renderer busy' },
  upstream_timeout: { status: 504, title: 'Upstream timeout' },
} as const satisfies Record<string, { status: number; title: string }>;

/**
 * Reasons only the admin API answers with (src/admin/, on the ops listener); the v1 contract and its
 * OpenAPI document never name them. The rest of the table above is shared.
 */
export const ADMIN_REASONS = {
  account_exists: { status: 409, title: 'An account with this id exists or existed' },
  account_disabled: { status: 409, title: 'The account is disabled' },
  upstream_id_taken: { status: 409, title: 'The upstream customer is mapped to another account' },
  key_inactive: { status: 409, title: 'The key is revoked or expired' },
  webhook_state_conflict: { status: 409, title: 'The webhook endpoint or event is not in a state that allows this' },
} as const satisfies Record<string, { status: number; title: string }>;

const ALL_REASONS = { ...REASONS, ...ADMIN_REASONS };

/** What a problem type's documentation says (GET /problems/{reason}): when it is answered, and what the client does then. */
export interface ReasonDoc {
  when: string;
  whatToDo: string;
}

/**
 * Every reason's documentation, from the contract's table and the README. Typed against both
 * tables: a reason added there does not compile until it is documented here.
 */
export const REASON_DOCS = {
  invalid_request: {
    when: 'The request could not be read as sent: malformed JSON, wrong types in the path, query or body, unknown body fields, bad pagination values, an API key in the query string, or a header that cannot be read.',
    whatToDo: 'Correct the request as `detail` and `errors` (JSON pointers to the fields) say, then send it again; sent unchanged it fails the same way. An API key goes only in `Authorization: Bearer <key>`.',
  },
  idempotency_key_missing: {
    when: 'A write that needs an `Idempotency-Key` header (`POST /v1/orders`, `POST /v1/services/{id}/actions`) came without one. Nothing was done.',
    whatToDo: 'Send a new key for each operation you mean to perform, and the same key on every retry of that operation.',
  },
  idempotency_key_invalid: {
    when: 'The `Idempotency-Key` header is not 1 to 80 characters of `A-Za-z0-9_.-`. Nothing was done.',
    whatToDo: 'Send a key of that form (a UUID will do).',
  },
  unauthenticated: {
    when: 'No API key was sent, or a malformed, unknown, expired or revoked one, or a key of a disabled account, or more than one `Authorization` header. The answer carries `WWW-Authenticate: Bearer`.',
    whatToDo: 'Send one `Authorization: Bearer <key>` header with a valid key; ask the operator for a new key if yours was revoked or has expired.',
  },
  insufficient_scope: {
    when: 'The key is valid but lacks the scope the endpoint requires, named in `required_scope`. The request still counts against the key\'s limits.',
    whatToDo: 'Use a key that holds `required_scope`, or ask the operator for one; with this key the request fails the same way.',
  },
  not_found: {
    when: 'An unknown route, an unknown record, or a record of another account (reported exactly as one that does not exist).',
    whatToDo: 'Check the path and the id.',
  },
  method_not_allowed: {
    when: 'The path exists, but not with this method; the `Allow` header lists the methods it takes.',
    whatToDo: 'Use one of the methods in `Allow`.',
  },
  request_timeout: {
    when: 'The request, its head or its body, did not arrive whole within 30 s of its first byte (the request timeout: a stalled upload, a slow link). Nothing was done, and the connection is closed. The answer is sent only when none had started; else the connection is just closed.',
    whatToDo: 'Send the request again on a new connection; if it keeps happening, check what delays the upload (a proxy buffering it, the link), or send a smaller body.',
  },
  idempotency_conflict: {
    when: 'The `Idempotency-Key` was used before with another request: another body, or another endpoint.',
    whatToDo: 'Use a new key for a new operation; to retry the first one, send exactly its request again.',
  },
  idempotency_in_progress: {
    when: 'The first request with this `Idempotency-Key` is still running. The answer carries `Retry-After`.',
    whatToDo: 'Wait `Retry-After` seconds, then send the same request with the same key again (backing off by doubling).',
  },
  action_not_allowed: {
    when: 'The action is one this deployment offers, but the service\'s current state forbids it now.',
    whatToDo: 'Read the service and send an action its state allows; sent unchanged the request fails the same way.',
  },
  replay_stale: {
    when: 'Profile A: the `Idempotency-Key` is older than its replay window (one hour by default). Nothing is sent again, whatever the body.',
    whatToDo: 'Read the resources (your orders, the service) to learn what the first request did; perform the operation again with a new key only if it is still needed.',
  },
  payload_too_large: {
    when: 'The request body is larger than the limit (64 KiB by default).',
    whatToDo: 'Send a smaller body.',
  },
  uri_too_long: {
    when: 'The request target (path and query) is longer than 8 KiB (8,192 bytes), or the request line alone overflowed the parser\'s limit on the request head. Nothing was done; the connection is closed when the parser refused it.',
    whatToDo: 'Send a shorter URL: no v1 request needs a long one. Data goes in a JSON body, never in the query string.',
  },
  unsupported_media_type: {
    when: 'A body that is not `application/json`, JSON declared in a charset other than UTF-8, or a body in a content coding such as gzip (then the answer carries `Accept-Encoding: identity`).',
    whatToDo: 'Send the body as uncompressed UTF-8 JSON with `Content-Type: application/json`.',
  },
  expectation_failed: {
    when: 'The request carries an `Expect` header with an expectation other than `100-continue`, which the gateway cannot meet (RFC 9110 §10.1.1). Nothing was done.',
    whatToDo: 'Send the request without that `Expect` header (or with `Expect: 100-continue`).',
  },
  invalid_action: {
    when: 'The action is not one of this deployment\'s; `allowed_actions` lists those it offers.',
    whatToDo: 'Send one of `allowed_actions`.',
  },
  validation_failed: {
    when: 'A well-formed request the billing system refuses: an unknown product, a disabled billing cycle, a bad option. `errors` points at the field when it is known.',
    whatToDo: 'Correct the request; send a corrected write with a new `Idempotency-Key` (the same key may replay this answer).',
  },
  rate_limited: {
    when: 'A rate limit of the key, its account or the source address is exhausted; `violated_policies` names which. The refused request consumed nothing of the key\'s or the account\'s limits.',
    whatToDo: 'Wait `Retry-After` seconds before sending again, and pace requests by the `RateLimit` and `X-RateLimit-*` headers.',
  },
  headers_too_large: {
    when: 'The request line and header fields together are larger than the gateway reads (16 KiB by default: one huge header, or very many). Nothing was done, and the connection is closed.',
    whatToDo: 'Send fewer or smaller headers (a proxy in front may be adding some), then send the request again.',
  },
  internal_error: {
    when: 'An unexpected failure in the gateway; it is logged with the request id.',
    whatToDo: 'Retry later; if it persists, report the `request_id` to the operator.',
  },
  renderer_out_of_memory: {
    when: "Rendering the invoice as a PDF needed more memory than the gateway lets one render use (the operator's `pdf.renderMemoryMb`); nothing was rendered, and it is logged.",
    whatToDo: 'Asking again gives the same answer for the same invoice: report the `request_id` to the operator, who can raise the limit; the invoice itself is still readable as JSON.',
  },
  upstream_error: {
    when: 'The billing backend answered with an error or with something unreadable.',
    whatToDo: 'Retry later (a write with the same `Idempotency-Key`); if it persists, report the `request_id` to the operator.',
  },
  upstream_unavailable: {
    when: 'The billing backend is unreachable, the gateway stopped calling it for a while after repeated failures, or too many calls to it are waiting already. The answer carries `Retry-After`.',
    whatToDo: 'Wait `Retry-After` seconds and retry (a write with the same `Idempotency-Key`).',
  },
  store_unavailable: {
    when: 'A store the gateway needs (Redis) is down; a write that needs idempotency is never executed unguarded. The answer carries `Retry-After`.',
    whatToDo: 'Wait `Retry-After` seconds and retry (a write with the same `Idempotency-Key`): nothing was done.',
  },
  outcome_unknown: {
    when: 'An earlier attempt with this `Idempotency-Key` reached the billing backend, and whether it took effect could not be established yet; the gateway does not risk doing it twice.',
    whatToDo: 'Retry later with the same key and body: the gateway first finds out what the earlier attempt did. A new key could perform the operation twice.',
  },
  backend_misconfigured: {
    when: 'A self-check of the billing backend fails, and the operation it guards (placing orders) is stopped until a later check passes. Nothing was sent, and the `Idempotency-Key` stays free. The answer carries `Retry-After`.',
    whatToDo: 'Retry the same request after `Retry-After` seconds; tell the operator if it persists. Other operations are served.',
  },
  renderer_busy: {
    when: 'An invoice PDF was asked for while this instance already has as many renders waiting as it takes (or this account its share of them). Nothing was rendered. The answer carries `Retry-After`.',
    whatToDo: 'Ask again after `Retry-After` seconds; fetch many PDFs one after another rather than all at once.',
  },
  upstream_timeout: {
    when: 'The billing backend did not answer in time.',
    whatToDo: 'Retry later; a write with the same `Idempotency-Key`, so that it is not performed twice.',
  },
  account_exists: {
    when: 'Admin API: an account with this id exists already, or existed and was deleted: an account id is never another tenant\'s (what is kept under it, such as idempotency records and the answers they replay, would reach the new holder).',
    whatToDo: 'Choose another id, or use the existing account.',
  },
  account_disabled: {
    when: 'Admin API: the account is disabled; no key is issued or rotated, and no webhook event replayed, for it.',
    whatToDo: 'Enable the account first (`POST /admin/v1/accounts/{id}/enable`).',
  },
  upstream_id_taken: {
    when: 'Admin API: another account (named in `held_by`) is mapped to this `upstream_id` already; its keys would read, and its webhook endpoint hear of, the same customer. One backend customer maps to one account. Nothing was written.',
    whatToDo: 'Check the `upstream_id` (a typo?). To move the customer to this account, first map the account in `held_by` to another customer (`PATCH /admin/v1/accounts/{id}`).',
  },
  key_inactive: {
    when: 'Admin API: the key is revoked or expired, so it cannot be rotated (and a retry does not bring it back).',
    whatToDo: 'Issue a new key for the account.',
  },
  webhook_state_conflict: {
    when:
      'Admin API: the webhook event is not `failed` or `dropped` (only those are replayed), or the endpoint is still disabled. ' +
      'In the admin audit log, also a `reseller-keys webhook-secrets reseal` that found endpoints whose secret none of the keys opens.',
    whatToDo:
      'Read the deliveries and the endpoint; re-enable a disabled endpoint (`POST …/webhook/enable`) before replaying. ' +
      'After such a reseal, set the endpoints it named again.',
  },
} satisfies Record<AnyReason, ReasonDoc>;

/** A reason of the v1 contract. */
export type Reason = keyof typeof REASONS;
export type AdminReason = keyof typeof ADMIN_REASONS;
/** Every reason a problem can carry: the v1 contract's and the admin API's. */
export type AnyReason = Reason | AdminReason;

/** A reason's status and title, from whichever table holds it. */
export function reasonSpec(reason: AnyReason): { status: number; title: string } {
  return ALL_REASONS[reason];
}

export interface FieldError {
  /** JSON pointer (RFC 6901) into the request: `/body/field`, `/query/page`, `/path/id`. */
  pointer: string;
  detail: string;
}

export interface ApiErrorOptions {
  /** Extension members added to the problem document (`allowed_actions`, `required_scope`, …). */
  extensions?: Record<string, unknown>;
  headers?: Record<string, string>;
  errors?: FieldError[];
  cause?: unknown;
  /** Fields for the access line only, never sent: what the operator needs and the client may not see. */
  logged?: Record<string, string>;
}

/** The one error class. Its `detail` is written for the client: never put upstream text in it. */
export class ApiError extends Error {
  readonly reason: AnyReason;
  readonly status: number;
  readonly detail: string;
  readonly extensions: Record<string, unknown>;
  readonly headers: Record<string, string>;
  readonly errors: FieldError[] | undefined;
  readonly logged: Record<string, string> | undefined;

  constructor(reason: AnyReason, detail: string, options: ApiErrorOptions = {}) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ApiError';
    this.reason = reason;
    this.status = reasonSpec(reason).status;
    this.detail = detail;
    this.extensions = options.extensions ?? {};
    this.headers = options.headers ?? {};
    this.errors = options.errors;
    this.logged = options.logged;
  }
}

export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  reason: AnyReason;
  request_id: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

export function problemDocument(error: ApiError, requestId: string, typeBase: string): ProblemDocument {
  return {
    ...error.extensions,
    type: `${typeBase}${error.reason}`,
    title: reasonSpec(error.reason).title,
    status: error.status,
    detail: error.detail,
    instance: `urn:uuid:${requestId}`,
    reason: error.reason,
    request_id: requestId,
    ...(error.errors ? { errors: error.errors } : {}),
  };
}
