/** How the admin API turns failures into problems: the service's refusals by kind, the rest as v1 does. */
import { ApiError, type AnyReason } from '../errors.js';
import { toApiError } from '../http/problems.js';
import { Refusal, type RefusalKind } from '../keys/refusal.js';

const REFUSAL_REASONS: Record<RefusalKind, AnyReason> = {
  unknown: 'not_found',
  exists: 'account_exists',
  upstream_taken: 'upstream_id_taken',
  key_inactive: 'key_inactive',
  account_disabled: 'account_disabled',
  webhook_state: 'webhook_state_conflict',
};

export function toAdminApiError(error: unknown): ApiError {
  // A refusal's message names ids the operator sent, never a secret: it is the detail as it is.
  if (error instanceof Refusal) return new ApiError(REFUSAL_REASONS[error.kind], `${error.message}.`, { cause: error, extensions: error.extensions });
  return toApiError(error);
}

/** A body field the schema let through that the backend refuses (an upstream id), as a validation failure answers. */
export function invalidBodyField(field: string, detail: string): ApiError {
  return new ApiError('invalid_request', 'The request body is invalid.', { errors: [{ pointer: `/${field}`, detail }] });
}

export function unauthenticated(detail: string, tokenSent: boolean): ApiError {
  const challenge = tokenSent ? 'Bearer realm="admin", error="invalid_token"' : 'Bearer realm="admin"';
  return new ApiError('unauthenticated', detail, { headers: { 'www-authenticate': challenge } });
}

export function insufficientScope(scope: string): ApiError {
  return new ApiError('insufficient_scope', `This admin endpoint requires the scope ${scope}.`, {
    extensions: { required_scope: scope },
    headers: { 'www-authenticate': `Bearer realm="admin", error="insufficient_scope", scope="${scope}"` },
  });
}
