import { defineEndpoint } from '../../../http/endpoint.js';
import { WebhookConfigSchema } from './schemas.js';

export default defineEndpoint({
  method: 'GET',
  url: '/v1/webhooks',
  operationId: 'getWebhook',
  summary: 'Current webhook URL',
  description: 'The signing secret is never returned here.',
  tag: 'Webhooks',
  scope: 'read:webhooks',
  responses: { 200: { description: 'The webhook configuration; `url` is null when none is set.', schema: WebhookConfigSchema } },
  errors: [],
  async handler({ caller, services }) {
    const record = await services.stores.webhooks.get(caller.account.id);
    return { status: 200, body: { url: record?.url ?? null, updated_at: record?.updatedAt ?? null } };
  },
});
