import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { ApiError } from '../../../errors.js';
import { defineEndpoint } from '../../../http/endpoint.js';
import { checkWebhookUrl, MAX_WEBHOOK_URL_LENGTH } from '../../../webhooks/url-policy.js';
import { WebhookSetResultSchema } from './schemas.js';

const WebhookInputSchema = z
  .strictObject({
    url: z.string().max(MAX_WEBHOOK_URL_LENGTH).nullable().meta({ description: 'An https URL to set, or null to unset.' }),
  })
  .meta({ id: 'WebhookInput' });

export default defineEndpoint({
  method: 'PUT',
  url: '/v1/webhooks',
  operationId: 'putWebhook',
  summary: 'Set or unset the webhook URL',
  description:
    '`{"url": "https://..."}` sets the URL and returns a new signing secret, once. `{"url": null}` unsets it. ' +
    'The URL must use https, carry no credentials and not point at loopback, private, link-local or metadata addresses (422 otherwise).',
  tag: 'Webhooks',
  scope: 'write:webhooks',
  body: WebhookInputSchema,
  responses: { 200: { description: 'The new configuration.', schema: WebhookSetResultSchema } },
  errors: ['validation_failed'],
  async handler({ body, caller, services }) {
    const updatedAt = new Date().toISOString();
    if (body.url === null) {
      await services.stores.webhooks.clear(caller.account.id);
      return { status: 200, body: { url: null, updated_at: updatedAt } };
    }
    const verdict = await checkWebhookUrl(body.url, { resolve: services.resolveHost });
    if (!verdict.ok) {
      throw new ApiError('validation_failed', verdict.reason, { errors: [{ pointer: '/url', detail: verdict.reason }] });
    }
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const url = verdict.url.toString();
    await services.stores.webhooks.set(caller.account.id, { url, secret, updatedAt });
    return { status: 200, body: { url, secret, updated_at: updatedAt } };
  },
});
