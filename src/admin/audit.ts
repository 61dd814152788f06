/**
 * The admin audit log: one JSON line per admin call, whatever its outcome (refused ones too),
 * written and flushed before the answer leaves, in its own file (`admin.auditFile`). It names who
 * (the token's name), what (the operation), which account, key or event, and the outcome; never a
 * secret: no token, no key, no request body. A record that cannot be written is logged at error
 * level and the answer still goes out: the call has happened, and hiding its answer would only
 * make the panel retry it.
 */
import type { FastifyRequest } from 'fastify';
import type { AuditLog } from '../audit.js';
import type { AnyReason } from '../errors.js';
import type { AuditSubject } from './endpoint.js';
import { clientText } from '../secret-like.js';

export interface AdminAuditRecord {
  time: string;
  event: 'admin.call';
  request_id: string;
  /** The admin token's name; null when no valid token was sent. */
  token: string | null;
  /** The endpoint's operationId (`issueKey`, …). */
  operation: string;
  method: string;
  /** The route template, e.g. `/admin/v1/accounts/:id/keys`. */
  route: string;
  account_id: string | null;
  key_id: string | null;
  /** The key the call made (issue, rotate). */
  new_key_id: string | null;
  event_id: string | null;
  source_ip: string;
  /** `done` (2xx), `denied` (401, 403), `refused` (any other 4xx), `failed` (5xx). */
  outcome: 'done' | 'denied' | 'refused' | 'failed';
  status: number;
  /** The problem's reason; null when done. */
  reason: AnyReason | null;
  /** An idempotent replay: the stored answer, nothing done again. */
  replayed: boolean;
}

export type AdminAuditLog = AuditLog<AdminAuditRecord>;

/** Requests whose record was attempted: a failed write is not retried, so no call gets two. */
const attempted = new WeakSet<FastifyRequest>();

/** Text the client sent, fit for a record (see clientText); null when it is not text. */
function recordedText(value: unknown): string | null {
  return typeof value === 'string' ? clientText(value) : null;
}

/** What a status says of the call (the key CLI's records say the same of its commands). */
export function outcomeOf(status: number): AdminAuditRecord['outcome'] {
  if (status < 300) return 'done';
  if (status === 401 || status === 403) return 'denied';
  return status < 500 ? 'refused' : 'failed';
}

/**
 * What the path names (`/admin/v1/keys/:id` a key, other `:id`s an account, `:event_id` an event),
 * with what the endpoint adds (its values, where it has them, win).
 */
export function subjectOf(route: string, params: unknown, added: AuditSubject = {}): AuditSubject {
  const subject = fromPath(route, params);
  for (const [field, value] of Object.entries(added) as Array<[keyof AuditSubject, string | undefined]>) {
    const text = recordedText(value);
    if (text !== null) subject[field] = text;
  }
  return subject;
}

function fromPath(route: string, params: unknown): AuditSubject {
  const raw = (params ?? {}) as Record<string, unknown>;
  const id = recordedText(raw.id);
  const subject: AuditSubject = {};
  if (id !== null) {
    if (route.startsWith('/admin/v1/keys/')) subject.keyId = id;
    else subject.accountId = id;
  }
  const eventId = recordedText(raw.event_id);
  if (eventId !== null) subject.eventId = eventId;
  return subject;
}

export interface AdminCall {
  request: FastifyRequest;
  token: string | null;
  operation: string;
  route: string;
  subject: AuditSubject;
  status: number;
  reason: AnyReason | null;
  replayed: boolean;
}

/** Writes the call's one record; never throws (a failure is logged for the operator). */
export async function auditAdminCall(audit: AdminAuditLog, call: AdminCall): Promise<void> {
  const { request } = call;
  if (attempted.has(request)) return;
  attempted.add(request);
  const record: AdminAuditRecord = {
    time: new Date().toISOString(),
    event: 'admin.call',
    request_id: request.id,
    token: call.token,
    operation: call.operation,
    method: request.method,
    route: call.route,
    account_id: call.subject.accountId ?? null,
    key_id: call.subject.keyId ?? null,
    new_key_id: call.subject.newKeyId ?? null,
    event_id: call.subject.eventId ?? null,
    source_ip: request.ip,
    outcome: outcomeOf(call.status),
    status: call.status,
    reason: call.reason,
    replayed: call.replayed,
  };
  try {
    await audit.write(record);
  } catch (error) {
    request.log.error({ err: (error as Error).message, operation: call.operation, status: call.status }, 'admin audit record could not be written');
  }
}
