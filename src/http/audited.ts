/**
 * The credentials audit as a rule of the pipeline (contract §6): every request routed to an endpoint
 * marked `audited` writes exactly one record, whatever its outcome, before the answer leaves. The
 * pipeline writes it for an answer the handler produced (and refuses to send that answer when the
 * record cannot be written); the one error handler writes it for every failure, wherever in the
 * pipeline it happened (source-IP limit, authentication, scope, limits, validation, handler).
 */
import type { FastifyRequest } from 'fastify';
import type { AuditLog, AuditRecord } from '../audit.js';
import { ApiError } from '../errors.js';
import { bearerKey, sentKeyId } from '../keys/api-key.js';
import type { StoredResponse } from '../stores/types.js';
import { clientText } from '../secret-like.js';
import { sourceAddress } from './source-address.js';

/** Requests whose record was attempted: a failed write is not retried, so no request gets two. */
const attempted = new WeakSet<FastifyRequest>();

export function isAudited(request: FastifyRequest): boolean {
  return request.routeOptions.config?.audited === true;
}

function outcomeOf(status: number): AuditRecord['outcome'] {
  if (status < 300) return 'returned';
  if (status === 401 || status === 403) return 'denied';
  if (status === 404) return 'not_found';
  return 'failed';
}

function recordOf(request: FastifyRequest, status: number, reason: AuditRecord['reason'], fields: string[]): AuditRecord {
  const caller = request.caller;
  const sent = bearerKey(request.headers.authorization);
  const params = (request.params ?? {}) as Record<string, unknown>;
  return {
    time: new Date().toISOString(),
    event: 'credentials.read',
    request_id: request.id,
    key_id: caller?.key.id ?? (sent === undefined ? null : (sentKeyId(sent) ?? null)),
    account_id: caller?.account.id ?? null,
    service_id: clientText(String(params.id ?? '')),
    source_ip: sourceAddress(request),
    user_agent: clientText(request.headers['user-agent'] ?? ''),
    fields,
    outcome: outcomeOf(status),
    status,
    reason,
  };
}

async function writeOnce(audit: AuditLog, record: AuditRecord, request: FastifyRequest): Promise<void> {
  if (attempted.has(request)) return;
  attempted.add(request);
  await audit.write(record);
}

/** The names of the fields sent (never their values): none for a HEAD, which sends no body. */
function fieldNames(request: FastifyRequest, response: StoredResponse): string[] {
  if (request.method === 'HEAD' || !response.headers['content-type']?.startsWith('application/json')) return [];
  const body: unknown = JSON.parse(response.body);
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? Object.keys(body) : [];
}

/** Records an answer the handler produced; throws (503) when it cannot, so that answer never leaves. */
export async function auditAnswer(request: FastifyRequest, audit: AuditLog, response: StoredResponse): Promise<void> {
  try {
    await writeOnce(audit, recordOf(request, response.status, null, fieldNames(request, response)), request);
  } catch (error) {
    throw new ApiError('store_unavailable', 'The credentials read could not be audited, so nothing is returned.', {
      headers: { 'retry-after': '5' },
      cause: error,
    });
  }
}

/** Records a failure. Never throws: the problem is sent anyway (it holds no secret); the operator is told. */
export async function auditFailure(request: FastifyRequest, audit: AuditLog, error: ApiError): Promise<void> {
  try {
    await writeOnce(audit, recordOf(request, error.status, error.reason, []), request);
  } catch (failure) {
    request.log.error({ err: failure, status: error.status, reason: error.reason }, 'audit record could not be written');
  }
}
