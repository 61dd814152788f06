import { defineAdminEndpoint } from '../endpoint.js';
import { AccountPathSchema, WebhookEndpointSchema, webhookView } from '../schemas.js';

export default defineAdminEndpoint({
  method: 'POST',
  url: '/admin/v1/accounts/:id/webhook/enable',
  operationId: 'enableWebhookEndpoint',
  summary: 'Re-enable a webhook endpoint',
  description:
    'Enables an endpoint disabled after a 410 or days of failures, with its URL and signing secret; its run of failures starts afresh. ' +
    'Events dropped meanwhile are not sent by this: replay them.',
  tag: 'Webhooks',
  scope: 'admin:webhooks',
  params: AccountPathSchema,
  responses: { 200: { description: 'The endpoint, enabled.', schema: WebhookEndpointSchema } },
  errors: ['not_found'],
  async handler({ params, webhooks }) {
    return { status: 200, body: webhookView(await webhooks.enableWebhook(params.id)) };
  },
});
