import { z } from 'zod';
import { defineAdminEndpoint } from '../endpoint.js';
import { DeliverySchema, deliveryView } from '../schemas.js';

export default defineAdminEndpoint({
  method: 'POST',
  url: '/admin/v1/accounts/:id/webhook/deliveries/:event_id/replay',
  operationId: 'replayWebhookDelivery',
  summary: 'Replay a failed event',
  description:
    'Queues a `failed` or `dropped` event again, with its id and payload as first sent and the whole retry schedule ahead of it ' +
    '(receivers deduplicate on `webhook-id`). 409 `webhook_state_conflict` for any other state, or while the endpoint is disabled; ' +
    '409 `account_disabled` while the account is (its events are dropped unsent).',
  tag: 'Webhooks',
  scope: 'admin:webhooks',
  params: z.strictObject({
    id: z.string().min(1).max(100).meta({ description: 'The account id.' }),
    event_id: z.string().regex(/^evt_[0-9a-z]{1,60}$/, 'must be an event id (evt_…)').meta({ description: 'The event id.' }),
  }),
  responses: { 202: { description: 'Queued: the delivery, pending.', schema: DeliverySchema } },
  errors: ['not_found', 'webhook_state_conflict', 'account_disabled'],
  async handler({ params, webhooks }) {
    return { status: 202, body: deliveryView(await webhooks.replayDelivery(params.id, params.event_id)) };
  },
});
