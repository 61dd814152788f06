import { z } from 'zod';
import { ApiError } from '../../../errors.js';
import { defineEndpoint } from '../../../http/endpoint.js';
import { updateIfUnchanged } from '../../../stores/update-if-unchanged.js';
import type { WebhookRecord } from '../../../stores/webhook-types.js';
import type { SecretBox } from '../../../webhooks/secret-box.js';
import { newWebhookSecret } from '../../../webhooks/signing.js';
import { checkWebhookUrl, MAX_WEBHOOK_URL_LENGTH } from '../../../webhooks/url-policy.js';
import { webhookView, WebhookSetResultSchema } from './schemas.js';

/** How long the previous secret keeps signing after a rotation. */
const ROTATION_OVERLAP_MS = 24 * 3_600_000;

const WebhookInputSchema = z
  .strictObject({
    url: z.string().max(MAX_WEBHOOK_URL_LENGTH).nullable().meta({ description: 'An https URL to set, or null to unset.', example: 'https://hooks.example.com/reseller' }),
    rotate_secret: z.boolean().optional().meta({
      description: 'Issue a new signing secret. For 24 hours deliveries carry signatures with both the new and the previous secret.',
    }),
  })
  .meta({ id: 'WebhookInput' });

export default defineEndpoint({
  method: 'PUT',
  url: '/v1/webhooks',
  operationId: 'putWebhook',
  summary: 'Set or unset the webhook URL',
  description:
    '`{"url": "https://..."}` sets the URL (and enables a disabled endpoint); the first time, or with `"rotate_secret": true`, ' +
    'it returns a new signing secret, once. `{"url": null}` unsets it. A `webhook.test` event is sent to the URL that was set. ' +
    'The URL must use https on port 443 (or a port the operator allows), carry no credentials and not point at loopback, private, link-local or metadata addresses (422 otherwise).',
  tag: 'Webhooks',
  scope: 'write:webhooks',
  body: WebhookInputSchema,
  responses: { 200: { description: 'The new configuration.', schema: WebhookSetResultSchema } },
  errors: ['validation_failed'],
  async handler({ body, caller, deps, call }) {
    const now = new Date();
    const accountId = caller.account.id;
    const { stores, webhooks } = deps;
    if (body.url === null) {
      await stores.webhooks.clear(accountId);
      return { status: 200, body: { ...webhookView(null), updated_at: now.toISOString() } };
    }
    const verdict = await checkWebhookUrl(body.url, {
      resolve: deps.resolveHost,
      allowPrivateTargets: webhooks.allowPrivateTargets,
      allowedPorts: webhooks.allowedPorts,
    });
    if (!verdict.ok) {
      throw new ApiError('validation_failed', verdict.reason, { errors: [{ pointer: '/url', detail: verdict.reason }] });
    }
    const url = verdict.url.toString();
    // An endpoint set anew or enabled again hears of changes from now on, not of those made while it
    // was unset or disabled (the detector skips it then, so the mark can go first).
    const current = await stores.webhooks.get(accountId);
    if (current === null || current.status === 'disabled') await webhooks.events.rebaseline(accountId);
    // By the store's clock, as the snapshot stamps it is compared with (this instance's may disagree).
    const since = new Date(await stores.webhooks.clock(accountId)).toISOString();
    // A concurrent first PUT that lands in between is kept: this one then sets the URL only, and one
    // secret is handed out.
    const { after: written } = await updateIfUnchanged({
      read: () => stores.webhooks.get(accountId),
      change: (existing) => replacement(existing, url, body.rotate_secret === true, now, since, webhooks.box),
      write: (change, existing) => stores.webhooks.set(accountId, change.record, existing?.secret ?? null),
    });
    const { record, secret } = written;
    await webhooks.events.emitForWrite(accountId, 'webhook.test', { url }, call.trace);
    return { status: 200, body: { ...webhookView(record), ...(secret === undefined ? {} : { secret }) } };
  },
});

/** The record a PUT of `url` writes over `existing`, with the new secret in clear when it makes one. */
function replacement(
  existing: WebhookRecord | null,
  url: string,
  rotate: boolean,
  now: Date,
  since: string,
  box: SecretBox,
): { record: WebhookRecord; secret: string | undefined } {
  const secret = existing === null || rotate ? newWebhookSecret() : undefined;
  const record: WebhookRecord = {
    url,
    secret: secret === undefined ? (existing as WebhookRecord).secret : box.seal(secret),
    previousSecret: existing?.previousSecret ?? null,
    previousSecretExpiresAt: existing?.previousSecretExpiresAt ?? null,
    updatedAt: now.toISOString(),
    status: 'enabled',
    disabledReason: null,
    lastDelivery: existing?.url === url ? existing.lastDelivery : null,
    // The same URL, still enabled: its run of failures goes on (re-sending the URL must not keep a
    // dead endpoint from being disabled). A new URL, or one enabled again, starts afresh.
    failingSince: existing?.url === url && existing.status === 'enabled' ? existing.failingSince : null,
    // Changes are news from when it is set anew or enabled again (as its baseline mark is dropped then).
    reportFrom: existing?.status === 'enabled' ? (existing.reportFrom ?? since) : since,
  };
  if (existing !== null && secret !== undefined) {
    record.previousSecret = existing.secret;
    record.previousSecretExpiresAt = new Date(now.getTime() + ROTATION_OVERLAP_MS).toISOString();
  }
  return { record, secret };
}
