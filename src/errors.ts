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

export type Reason = keyof typeof REASONS;

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
}

/** The one error class. Its `detail` is written for the client: never put upstream text in it. */
export class ApiError extends Error {
  readonly reason: Reason;
  readonly status: number;
  readonly detail: string;
  readonly extensions: Record<string, unknown>;
  readonly headers: Record<string, string>;
  readonly errors: FieldError[] | undefined;

  constructor(reason: Reason, detail: string, options: ApiErrorOptions = {}) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ApiError';
    this.reason = reason;
    this.status = REASONS[reason].status;
    this.detail = detail;
    this.extensions = options.extensions ?? {};
    this.headers = options.headers ?? {};
    this.errors = options.errors;
  }
}

export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance: string;
  reason: Reason;
  request_id: string;
  errors?: FieldError[];
  [extension: string]: unknown;
}

export function problemDocument(error: ApiError, requestId: string, typeBase: string): ProblemDocument {
  return {
    ...error.extensions,
    type: `${typeBase}${error.reason}`,
    title: REASONS[error.reason].title,
    status: error.status,
    detail: error.detail,
    instance: `urn:uuid:${requestId}`,
    reason: error.reason,
    request_id: requestId,
    ...(error.errors ? { errors: error.errors } : {}),
  };
}
