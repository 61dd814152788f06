/**
 * The key CLI's audit trail: each command that reaches the store, and `admin-token create`, appends
 * one record to the admin audit log (`admin.auditFile`, src/admin/audit.ts), the file the admin API
 * writes, in its shape, so "who revoked this key" has one answer whichever way it was done. The actor
 * is the OS user and host (`cli:<user>@<host>`); there is no request, so `method` and `source_ip` are
 * null; `status` is what the admin API would answer for the same ending, and `exit_code` the
 * command's. Never a key or a token: ids pass the same filter as the API's paths.
 */
import { randomUUID } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import { outcomeOf, type AdminAuditRecord } from '../admin/audit.js';
import type { AuditSubject } from '../admin/endpoint.js';
import { toAdminApiError } from '../admin/problems.js';
import { FileAuditLog } from '../audit.js';
import type { AnyReason } from '../errors.js';
import { clientText } from '../secret-like.js';
import { UsageError, type CliValues } from './args.js';
import type { CliIo } from './io.js';

export interface CliAuditRecord extends Omit<AdminAuditRecord, 'method' | 'source_ip'> {
  /** `cli:<OS user>@<host>`. */
  actor: string;
  method: null;
  source_ip: null;
  /** The name of the admin token `admin-token create` minted (never the token or its hash). */
  new_token: string | null;
  exit_code: number;
}

/** The admin API's operationId for the same change (or read); the commands missing here are not audited. */
const OPERATIONS: Record<string, string> = {
  'account add': 'createAccount',
  'account update': 'updateAccount',
  'account list': 'listAccounts',
  'account disable': 'disableAccount',
  'account enable': 'enableAccount',
  'account delete': 'deleteAccount',
  issue: 'issueKey',
  list: 'listKeys',
  rotate: 'rotateKey',
  revoke: 'revokeKey',
  // No admin API endpoint does these; named as one would be.
  'admin-token create': 'createAdminToken',
  'webhook-secrets reseal': 'resealWebhookSecrets',
};

/** The operations the admin API answers 201 when done (what it creates); the others 200. */
const CREATING = new Set(['createAccount', 'issueKey', 'rotateKey', 'createAdminToken']);

/** The command's words (`account add`, `issue`), as the help names them. */
function commandOf(positionals: string[]): string {
  const [command = '', sub = ''] = positionals;
  return OPERATIONS[`${command} ${sub}`] ? `${command} ${sub}` : command;
}

interface CliSubject extends AuditSubject {
  /** The admin token's name, for `admin-token create`. */
  newToken?: string;
}

/** What the arguments name: an account's id, or a key's (the key commands take it as their second word), or a new admin token's name. */
function subjectOfArgs(command: string, positionals: string[], values: CliValues): CliSubject {
  if (command === 'admin-token create') return values.name === undefined ? {} : { newToken: values.name };
  if (command.startsWith('account ')) return positionals[2] === undefined ? {} : { accountId: positionals[2] };
  if (command === 'rotate' || command === 'revoke') return positionals[1] === undefined ? {} : { keyId: positionals[1] };
  return values.account === undefined ? {} : { accountId: values.account };
}

function actor(env: NodeJS.ProcessEnv): string {
  let user: string;
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry for the uid (a container run with --user): what the shell says, if anything.
    user = env.USER ?? env.LOGNAME ?? 'unknown';
  }
  return `cli:${clientText(user)}@${clientText(hostname())}`;
}

function recorded(value: string | undefined): string | null {
  return value === undefined ? null : clientText(value);
}

export interface CommandEnd {
  code: number;
  /** What the command threw, when it did. */
  error?: unknown;
  /** What the command's result names beyond its arguments (the key it made, the key's account). */
  subject?: AuditSubject;
}

/** The status and reason the admin API would answer for the same ending; the outcome follows from the status as in its records. */
function ending(operation: string, end: CommandEnd): { status: number; reason: AnyReason | null } {
  if (end.error === undefined && end.code === 0) return { status: CREATING.has(operation) ? 201 : 200, reason: null };
  // The one command that ends non-zero without an error: a reseal that found secrets no key opens.
  // Those endpoints must be set again: the admin API's conflict with an endpoint's state.
  if (end.error === undefined) return { status: 409, reason: 'webhook_state_conflict' };
  // The CLI's usage errors are the admin API's 400s.
  if (end.error instanceof UsageError) return { status: 400, reason: 'invalid_request' };
  return toAdminApiError(end.error);
}

/**
 * Appends the command's record to `file` and waits until it is on disk. A record that cannot be
 * written is said on stderr and the exit code stays: the command has happened either way.
 */
export async function auditCommand(file: string, positionals: string[], values: CliValues, end: CommandEnd, io: CliIo): Promise<void> {
  const command = commandOf(positionals);
  const operation = OPERATIONS[command];
  if (operation === undefined) return;
  const subject = { ...subjectOfArgs(command, positionals, values), ...end.subject };
  const { status, reason } = ending(operation, end);
  const record: CliAuditRecord = {
    time: new Date().toISOString(),
    event: 'admin.call',
    request_id: randomUUID(),
    token: null,
    actor: actor(io.env),
    operation,
    method: null,
    route: `reseller-keys ${command}`,
    account_id: recorded(subject.accountId),
    key_id: recorded(subject.keyId),
    new_key_id: recorded(subject.newKeyId),
    event_id: null,
    source_ip: null,
    outcome: outcomeOf(status),
    status,
    new_token: recorded(subject.newToken),
    exit_code: end.code,
    reason,
    replayed: false,
  };
  const log = new FileAuditLog<CliAuditRecord>(file);
  try {
    await log.write(record);
  } catch (error) {
    io.err(`reseller-keys: the audit record could not be written to ${file}: ${(error as Error).message}\n`);
  } finally {
    await log.close().catch(() => undefined);
  }
}
