/** `issue`, `list`, `rotate` and `revoke`: the admin API's key endpoints, on the command line. */
import { MAX_GRACE_SECONDS, type AdminService } from '../admin/service.js';
import { ExpiresAtSchema, issuedView, KeyNameSchema, KeyPathSchema, keyView, RateLimitsSchema } from '../admin/schemas.js';
import { SCOPES, type Scope } from '../keys/scopes.js';
import type { ApiKeyRecord, KeyRateLimitOverrides } from '../stores/types.js';
import { accountIdArg } from './account-commands.js';
import { limit, parseScopes, text, UsageError, wholeNumber, type CliValues, type Output } from './args.js';

/**
 * The state the gateway acts on now, as the admin API's `status` says it: a key in a rotation's
 * grace period (a future revokedAt) is active until then, and an expiry passed is `expired`.
 */
function describeKey(key: ApiKeyRecord): string {
  const { status } = keyView(key);
  const ends = [key.revokedAt, key.expiresAt].filter((at): at is string => at !== null).sort((a, b) => Date.parse(a) - Date.parse(b));
  const state =
    status === 'revoked' ? `revoked ${key.revokedAt}` : status === 'expired' ? `expired ${key.expiresAt}` : ends[0] ? `active until ${ends[0]}` : 'active';
  return `${key.id}  account=${key.accountId}  name=${key.name}  ${state}  scopes=${key.scopes.join(',')}`;
}

/**
 * A key id, as the admin API's path takes it. Anything else is refused without a lookup, and not
 * printed back: an operator pasting the full key here would otherwise see its secret on stderr.
 */
function keyIdArg(raw: string): string {
  return text('the key id', raw, KeyPathSchema.shape.id);
}

function rateLimits(values: CliValues): KeyRateLimitOverrides | null {
  const overrides: KeyRateLimitOverrides = {};
  const { per_minute: perMinuteSchema, burst: burstSchema, per_day: perDaySchema } = RateLimitsSchema.shape;
  const perMinute = limit('per-minute', values['per-minute'], perMinuteSchema);
  const burst = limit('burst', values.burst, burstSchema);
  const perDay = limit('per-day', values['per-day'], perDaySchema);
  if (perMinute !== undefined) overrides.perMinute = perMinute;
  if (burst !== undefined) overrides.burst = burst;
  if (perDay !== undefined) overrides.perDay = perDay;
  return Object.keys(overrides).length > 0 ? overrides : null;
}

export async function issueCommand(values: CliValues, keys: AdminService): Promise<Output> {
  if (!values.account || !values.name) throw new UsageError('--account and --name are required');
  const name = text('--name', values.name, KeyNameSchema);
  const expires = values.expires === undefined ? undefined : text('--expires', values.expires, ExpiresAtSchema);
  const overrides = rateLimits(values);
  const { record, key } = await keys.issueKey({
    accountId: accountIdArg(values.account),
    name,
    // `none`, as the admin API's `[]`: a key for GET /v1/me only (an integration's health check).
    scopes: values.scopes === 'none' ? [] : parseScopes<Scope>(values.scopes, SCOPES),
    expiresAt: expires === undefined ? null : new Date(expires).toISOString(),
    rateLimits: overrides,
  });
  return { text: `${describeKey(record)}\nkey (shown once, store it now): ${key}`, json: issuedView({ record, key }), subject: { newKeyId: record.id } };
}

export async function listCommand(values: CliValues, keys: AdminService): Promise<Output> {
  const listed = await keys.listKeys(values.account === undefined ? undefined : accountIdArg(values.account));
  const now = Date.now();
  // The items of the admin API's page, unpaged: the CLI lists them all.
  return { text: listed.map(describeKey).join('\n') || '(no keys)', json: listed.map((key) => keyView(key, now)) };
}

export async function rotateCommand(keyId: string | undefined, values: CliValues, keys: AdminService): Promise<Output> {
  if (!keyId) throw new UsageError('rotate <key id>');
  // Checked before anything is written: a grace past the last representable date would fail
  // only after the successor was stored, and the admin API refuses more than this too.
  const graceSeconds = wholeNumber('grace', values.grace) ?? 0;
  if (graceSeconds > MAX_GRACE_SECONDS) throw new UsageError(`--grace must be at most ${MAX_GRACE_SECONDS} seconds (30 days)`);
  const { record, key, old } = await keys.rotateKey(keyIdArg(keyId), graceSeconds * 1000);
  return {
    text: `${describeKey(old)}\n${describeKey(record)}\nnew key (shown once, store it now): ${key}`,
    json: { old: keyView(old), new: issuedView({ record, key }) },
    subject: { accountId: record.accountId, newKeyId: record.id },
  };
}

export async function revokeCommand(keyId: string | undefined, keys: AdminService): Promise<Output> {
  if (!keyId) throw new UsageError('revoke <key id>');
  const revoked = await keys.revokeKey(keyIdArg(keyId));
  return { text: describeKey(revoked), json: keyView(revoked), subject: { accountId: revoked.accountId } };
}
