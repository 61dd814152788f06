/**
 * Standard Webhooks v1 signatures: HMAC-SHA256 over `id.timestamp.body` with the endpoint's secret,
 * computed by the reference library receivers verify with.
 */
import { createHash, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { SnapshotEntry } from '../stores/webhook-types.js';

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** A new `whsec_` secret: 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Ids of events that are no change (a write's action, a test) sort by creation time; no id contains a `.` (the signed content's separator). */
export function newEventId(now = Date.now()): string {
  return `evt_${now.toString(36).padStart(9, '0')}${randomBytes(10).toString('hex')}`;
}

/**
 * The id of an event a change brings: the same for everyone who reports that change, since it is
 * made from the account, the resource, the snapshot entry the change is reported from (its state
 * and the tag recorded with it, new at every record) and where it goes. A later change of the same
 * resource is reported from another entry, so it gets ids of its own.
 */
export function changeEventId(accountId: string, resource: string, from: SnapshotEntry | null, type: string, state: string): string {
  const digest = createHash('sha256').update(JSON.stringify([accountId, resource, from?.state ?? null, from?.tag ?? '', type, state])).digest('hex');
  return `evt_${digest.slice(0, 32)}`;
}

/**
 * A snapshot entry's tag, random so that no two records share one; the store stamps it with when it
 * was recorded by its clock (ms since the epoch, base 36, then a '.': recordSnapshot's `stamp`).
 */
export function newSnapshotTag(): string {
  return randomBytes(12).toString('base64url');
}

/** When an entry was recorded, from its tag; undefined for a tag without a time (from before). */
export function snapshotTagTime(tag: string): number | undefined {
  const dot = tag.indexOf('.');
  const at = dot > 0 ? parseInt(tag.slice(0, dot), 36) : NaN;
  return Number.isFinite(at) ? at : undefined;
}

/**
 * Headers for one attempt. Every secret given signs (during a rotation: the new one, then the old
 * one), space-separated as the standard allows; the timestamp is the attempt's, the id the event's.
 */
export function signDelivery(secrets: readonly string[], eventId: string, at: Date, body: string): SignedHeaders {
  if (secrets.length === 0) throw new Error('no secret to sign with');
  const signatures = secrets.map((secret) => new Webhook(secret).sign(eventId, at, body));
  return {
    'webhook-id': eventId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
