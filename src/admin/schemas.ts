/** The admin API's shapes: what it takes and what it shows of accounts, keys and webhook deliveries. */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { isDisabled } from '../keys/key-service.js';
import { SCOPES } from '../keys/scopes.js';
import type { AccountRecord, ApiKeyRecord } from '../stores/types.js';
import type { DeliveryLogEntry, WebhookRecord } from '../stores/webhook-types.js';

const Timestamp = z.string().meta({ format: 'date-time', example: '2026-01-31T12:00:00Z' });

/**
 * Text a panel passes on (names, a customer id), 1 to `max` characters. Control characters are
 * refused: printed by the CLI or in a terminal, a line feed or an escape sequence forges output.
 * The admin API and the CLI both check with these.
 */
function plainText(max: number) {
  return z.string().min(1).max(max).regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, 'must not contain control characters');
}
export const AccountNameSchema = plainText(200);
// The example a client sends must be one a WHMCS or FOSSBilling gateway takes: digits.
export const UpstreamIdSchema = plainText(100).meta({ example: '12' });
/** What the upstream id is on each backend (README "Backends"); the key CLI's help says the same. */
export const UPSTREAM_ID_DESCRIPTION =
  "The backend's id of the customer this account maps to: the client id on WHMCS (`clientid`) and on FOSSBilling, in digits (`12`; " +
  'not `012`, `+12` or `12.0`: 400), ' +
  'the upstream account whose key `upstream.v1.apiKeys` holds on a v1 upstream.';
export const KeyNameSchema = plainText(100);
/** A new account's id: what the admin API and the CLI create (it goes into URLs, keys and logs). */
export const AccountIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'must be 1 to 64 characters of A-Z a-z 0-9 _ . - (starting with a letter or digit)');

/** An account id in a path: any existing id (one created before ids were checked may be longer). */
const ACCOUNT_PATH_ID = 'must be 1 to 100 characters';
export const AccountPathSchema = z.strictObject({ id: z.string().min(1, ACCOUNT_PATH_ID).max(100, ACCOUNT_PATH_ID).meta({ description: 'The account id.' }) });
export const KeyPathSchema = z.strictObject({ id: z.string().regex(/^[0-9a-f]{16}$/, 'must be a key id (16 hex digits)').meta({ description: 'The key id.' }) });

export const AccountSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    upstream_id: z.string().meta({ description: UPSTREAM_ID_DESCRIPTION, example: '12' }),
    status: z.enum(['active', 'disabled']).meta({ description: '`disabled`: every key of the account answers 401.' }),
    created_at: Timestamp,
    disabled_at: Timestamp.nullable(),
  })
  .meta({ id: 'AdminAccount' });

export function accountView(account: AccountRecord): z.infer<typeof AccountSchema> {
  return {
    id: account.id,
    name: account.name,
    upstream_id: account.upstreamId,
    status: isDisabled(account) ? 'disabled' : 'active',
    created_at: account.createdAt,
    disabled_at: account.disabledAt ?? null,
  };
}

export const RateLimitsSchema = z
  .strictObject({
    per_minute: z.number().int().min(1).optional().meta({ description: 'Sustained requests per minute.' }),
    burst: z.number().int().min(0).optional().meta({ description: 'Requests allowed at once on top of the sustained rate.' }),
    per_day: z.number().int().min(1).optional().meta({ description: 'Requests per UTC day.' }),
  })
  .meta({ id: 'AdminKeyRateLimits', description: "The key's own limits instead of the configured defaults." });

export const KeySchema = z
  .object({
    id: z.string(),
    account_id: z.string(),
    name: z.string(),
    scopes: z.array(z.enum(SCOPES)),
    status: z.enum(['active', 'revoked', 'expired']).meta({
      description: 'Now. An active key with a future `revoked_at` is in the grace period of a rotation.',
    }),
    created_at: Timestamp,
    expires_at: Timestamp.nullable(),
    revoked_at: Timestamp.nullable(),
    rate_limits: RateLimitsSchema.nullable(),
  })
  .meta({ id: 'AdminKey', description: 'A key as stored; never its secret or its hash.' });

export function keyView(key: ApiKeyRecord, now = Date.now()): z.infer<typeof KeySchema> {
  const ended = (at: string | null) => at !== null && Date.parse(at) <= now;
  const limits = key.rateLimits;
  return {
    id: key.id,
    account_id: key.accountId,
    name: key.name,
    scopes: key.scopes,
    status: key.revokedNow === true || ended(key.revokedAt) ? 'revoked' : ended(key.expiresAt) ? 'expired' : 'active',
    created_at: key.createdAt,
    expires_at: key.expiresAt,
    revoked_at: key.revokedAt,
    rate_limits: limits
      ? {
          ...(limits.perMinute === undefined ? {} : { per_minute: limits.perMinute }),
          ...(limits.burst === undefined ? {} : { burst: limits.burst }),
          ...(limits.perDay === undefined ? {} : { per_day: limits.perDay }),
        }
      : null,
  };
}

export const IssuedKeySchema = KeySchema.extend({
  key: z.string().meta({ description: 'The full API key (`rk_<id>_<secret>`). Shown in this answer only (and its idempotent replays).' }),
}).meta({ id: 'AdminIssuedKey' });

export function issuedView(issued: { record: ApiKeyRecord; key: string }): z.infer<typeof IssuedKeySchema> {
  return { ...keyView(issued.record), key: issued.key };
}

/**
 * The key id an idempotent call makes, from its idempotency record: a retry whose first attempt's
 * answer was lost writes the same key again instead of a second one.
 */
export function keyIdFor(recordId: string | undefined): string | undefined {
  return recordId === undefined ? undefined : createHash('sha256').update(`admin-key:${recordId}`).digest('hex').slice(0, 16);
}

/**
 * When a key stops working, for the admin API and the CLI's --expires: RFC 3339 with its offset
 * (a bare date or a local time would depend on the machine's zone and day order).
 */
export const ExpiresAtSchema = z.iso
  .datetime({ offset: true, error: 'must be an RFC 3339 time with its offset, e.g. 2027-01-01T00:00:00Z' })
  // A time already past would issue a key that never works: a typo, not a request.
  .refine((value) => !(Date.parse(value) <= Date.now()), 'must be in the future')
  // Far off, so the document's request example stays one the server takes.
  .meta({ example: '2099-01-01T00:00:00Z' });

export const KeyInputSchema = z
  .strictObject({
    name: KeyNameSchema,
    scopes: z.array(z.enum(SCOPES)).meta({ description: 'The v1 scopes the key carries (may be empty: `GET /v1/me` only).' }),
    expires_at: ExpiresAtSchema.nullable()
      .optional()
      .meta({ description: 'When the key stops working (RFC 3339, in the future); default never.' }),
    rate_limits: RateLimitsSchema.nullable().optional(),
  })
  .meta({ id: 'AdminKeyInput' });

export const WebhookEndpointSchema = z
  .object({
    url: z.string(),
    status: z.enum(['enabled', 'disabled']).meta({ description: '`disabled` after a 410 answer or days of failed deliveries.' }),
    disabled_reason: z.enum(['gone', 'failing']).nullable().meta({ example: null, description: '`gone`: the endpoint answered `410 Gone`; `failing`: every delivery failed for 5 days. null while enabled.' }),
    updated_at: Timestamp,
    last_delivery: z
      .object({ at: Timestamp, http_status: z.number().int().nullable(), attempts: z.number().int() })
      .nullable()
      .meta({ description: 'The last attempt of any event; `http_status` null when the receiver did not answer.' }),
    failing_since: Timestamp.nullable().meta({ description: 'Start of the current run of failed attempts.' }),
  })
  .meta({ id: 'AdminWebhookEndpoint', description: 'The endpoint an account set; never its secret.' });

export function webhookView(record: WebhookRecord): z.infer<typeof WebhookEndpointSchema> {
  const last = record.lastDelivery;
  return {
    url: record.url,
    status: record.status,
    disabled_reason: record.disabledReason,
    updated_at: record.updatedAt,
    last_delivery: last ? { at: last.at, http_status: last.httpStatus, attempts: last.attempts } : null,
    failing_since: record.failingSince,
  };
}

export const DeliverySchema = z
  .object({
    event_id: z.string().meta({ description: 'The `webhook-id` every attempt of the event carries.' }),
    type: z.string().meta({ description: 'The event type, e.g. `order.created`.' }),
    state: z.enum(['pending', 'delivered', 'failed', 'dropped']).meta({
      description: '`pending`: an attempt is due at `next_attempt_at`; `failed`: no attempt left; `dropped`: the endpoint was disabled or removed. `failed` and `dropped` events can be replayed.',
    }),
    attempts: z.number().int(),
    last_status: z.number().int().nullable().meta({ description: "The receiver's HTTP status at the last attempt; null when it did not answer or none was made." }),
    last_error: z.string().nullable().meta({
      description: 'Why the last attempt got no answer, e.g. `timed out`, `connection failed (ECONNREFUSED)`, `connection failed (CERT_HAS_EXPIRED)`, `host resolves to a non-public address`; null when it was answered or none was made.',
      example: null,
    }),
    last_attempt_at: Timestamp.nullable(),
    next_attempt_at: Timestamp.nullable(),
    created_at: Timestamp,
  })
  .meta({ id: 'AdminDelivery', description: 'One event sent (or to be sent) to the endpoint; never its payload.' });

export function deliveryView(entry: DeliveryLogEntry): z.infer<typeof DeliverySchema> {
  return {
    event_id: entry.eventId,
    type: entry.type,
    state: entry.state,
    attempts: entry.attempts,
    last_status: entry.lastStatus,
    last_error: entry.lastError ?? null,
    last_attempt_at: entry.lastAttemptAt,
    next_attempt_at: entry.nextAttemptAt,
    created_at: entry.createdAt,
  };
}
