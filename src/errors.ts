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
  idempotency_conflict: { status: 409, title: 'Idempotency-Key reused with another request' },
  idempotency_in_progress: { status: 409, title: 'A request with this Idempotency-Key is in progress' },
  action_not_allowed: { status: 409, title: 'Action not allowed in the current state' },
  replay_stale: { status: 410, title: 'Idempotency-Key has expired' },
  payload_too_large: { status: 413, title: 'Payload too large' },
  unsupported_media_type: { status: 415, title: 'Unsupported media type' },
  invalid_action: { status: 422, title: 'Invalid action' },
  validation_failed: { status: 422, title: 'Validation failed' },
  rate_limited: { status: 429, title: 'Rate limit exceeded' },
  internal_error: { status: 500, title: 'Internal error' },
  upstream_error: { status: 502, title: 'Upstream error' },
  upstream_unavailable: { status: 503, title: 'Upstream unavailable' },
  store_unavailable: { status: 503, title: 'Store unavailable' },
  outcome_unknown: { status: 503, title: 'Outcome of an earlier attempt is unknown' },
  backend_misconfigured: { status: 503, title: 'Backend misconfigured' },
  upstream_timeout: { status: 504, title: 'Upstream timeout' },
} as const satisfies Record<string, { status: number; title: string }>;

/**
 * Reasons only the admin API answers with (src/admin/, on the ops listener); the v1 contract and its
 * OpenAPI document never name them. The rest of the table above is shared.
 */
export const ADMIN_REASONS = {
  account_exists: { status: 409, title: 'An account with this id exists' },
  account_disabled: { status: 409, title: 'The account is disabled' },
  key_inactive: { status: 409, title: 'The key is revoked or expired' },
  webhook_state_conflict: { status: 409, title: 'The webhook endpoint or event is not in a state that allows this' },
} as const satisfies Record<string, { status: number; title: string }>;

const ALL_REASONS = { ...REASONS, ...ADMIN_REASONS };

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
