import { defineAdminEndpoint } from '../endpoint.js';
import { AccountPathSchema, WebhookEndpointSchema, webhookView } from '../schemas.js';

export default defineAdminEndpoint({
  method: 'GET',
  url: '/admin/v1/accounts/:id/webhook',
  operationId: 'getWebhookEndpoint',
  summary: "An account's webhook endpoint",
  description: 'URL, status, last delivery and the start of the current run of failures; 404 when the account set none.',
  tag: 'Webhooks',
  scope: 'admin:read',
  params: AccountPathSchema,
  responses: { 200: { description: 'The endpoint.', schema: WebhookEndpointSchema } },
  errors: ['not_found'],
  async handler({ params, webhooks }) {
    return { status: 200, body: webhookView(await webhooks.webhook(params.id)) };
  },
});
