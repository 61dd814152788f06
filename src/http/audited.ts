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
import type { RepeatedLog } from '../repeated-log.js';
import type { StoredResponse } from '../stores/types.js';
import { clientText } from '../secret-like.js';
import { sourceAddress } from './source-address.js';

/** Requests whose record was attempted: a failed write is not retried, so no request gets two. */
const attempted = new WeakSet<FastifyRequest>();
/** An answer's record that could not be written, told when its refusal reaches auditFailure. */
const unwritten = new WeakMap<FastifyRequest, { failure: unknown; status: number; reason: AuditRecord['reason'] }>();

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
    unwritten.set(request, { failure: error, status: response.status, reason: null });
    throw new ApiError('store_unavailable', 'The credentials read could not be audited, so nothing is returned.', {
      headers: { 'retry-after': '5' },
      cause: error,
    });
  }
}

/**
 * Records a failure, and tells the operator of a record not written (this one's, or the refused
 * answer's). Never throws: the problem is sent anyway (it holds no secret). A disk that fails fails
 * every read: the first is logged with its request and error, the others counted (repeated-log.ts).
 */
export async function auditFailure(request: FastifyRequest, audit: AuditLog, error: ApiError, repeats: RepeatedLog): Promise<void> {
  let notWritten = unwritten.get(request);
  try {
    await writeOnce(audit, recordOf(request, error.status, error.reason, []), request);
  } catch (failure) {
    notWritten = { failure, status: error.status, reason: error.reason };
  }
  if (notWritten === undefined) return;
  const message = notWritten.failure instanceof Error ? notWritten.failure.message : String(notWritten.failure);
  repeats.note('error', 'audit record could not be written', { error: message }, { err: notWritten.failure, status: notWritten.status, reason: notWritten.reason }, request.log);
}
