import { defineEndpoint } from '../../../http/endpoint.js';
import { webhookView, WebhookConfigSchema } from './schemas.js';

export default defineEndpoint({
  method: 'GET',
  url: '/v1/webhooks',
  operationId: 'getWebhook',
  summary: 'Current webhook URL',
  description: 'The signing secret is never returned here. `status`, `last_delivery` and `failing_since` tell how deliveries fare.',
  tag: 'Webhooks',
  scope: 'read:webhooks',
  responses: { 200: { description: 'The webhook configuration; `url` is null when none is set.', schema: WebhookConfigSchema } },
  errors: [],
  async handler({ caller, deps }) {
    const record = await deps.stores.webhooks.get(caller.account.id);
    return { status: 200, body: webhookView(record) };
  },
});
