/**
 * The key CLI's audit trail: each command that reaches the store appends one record to the admin
 * audit log (`admin.auditFile`, src/admin/audit.ts), the file the admin API writes, in its shape, so
 * "who revoked this key" has one answer whichever way it was done. The actor is the OS user and host
 * (`cli:<user>@<host>`); there is no request, so `method`, `source_ip` and `status` are null and
 * `exit_code` says how the command ended. Never a key: ids pass the same filter as the API's paths.
 */
import { randomUUID } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import type { AdminAuditRecord } from '../admin/audit.js';
import type { AuditSubject } from '../admin/endpoint.js';
import { toAdminApiError } from '../admin/problems.js';
import { FileAuditLog } from '../audit.js';
import type { AnyReason } from '../errors.js';
import { clientText } from '../secret-like.js';
import { UsageError, type CliValues } from './args.js';
import type { CliIo } from './io.js';

export interface CliAuditRecord extends Omit<AdminAuditRecord, 'method' | 'source_ip' | 'status'> {
  /** `cli:<OS user>@<host>`. */
  actor: string;
  method: null;
  source_ip: null;
  status: null;
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
  // No admin API endpoint does this; named as one would be.
  'webhook-secrets reseal': 'resealWebhookSecrets',
};

/** The command's words (`account add`, `issue`), as the help names them. */
function commandOf(positionals: string[]): string {
  const [command = '', sub = ''] = positionals;
  return OPERATIONS[`${command} ${sub}`] ? `${command} ${sub}` : command;
}

/** What the arguments name: an account's id, or a key's (the key commands take it as their second word). */
function subjectOfArgs(command: string, positionals: string[], values: CliValues): AuditSubject {
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

function ending(end: CommandEnd): { outcome: CliAuditRecord['outcome']; reason: AnyReason | null } {
  if (end.error === undefined) return { outcome: end.code === 0 ? 'done' : 'failed', reason: null };
  // The reason the admin API answers for the same failure: the CLI's usage errors are its 400s.
  const problem = end.error instanceof UsageError ? { reason: 'invalid_request' as const, status: 400 } : toAdminApiError(end.error);
  return { outcome: problem.status < 500 ? 'refused' : 'failed', reason: problem.reason };
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
  const { outcome, reason } = ending(end);
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
    outcome,
    status: null,
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
