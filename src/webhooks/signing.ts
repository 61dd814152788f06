/**
 * Standard Webhooks v1 signatures: HMAC-SHA256 over `id.timestamp.body` with the endpoint's secret,
 * computed by the reference library receivers verify with.
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** A new `whsec_` secret: 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** Event ids sort by creation time and contain no `.` (the signed content's separator). */
export function newEventId(now = Date.now()): string {
  return `evt_${now.toString(36).padStart(9, '0')}${randomBytes(10).toString('hex')}`;
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
