import { pageSchema, paginate, PageQuerySchema } from '../../http/pagination.js';
import { DELIVERY_LOG_SIZE } from '../../webhooks/delivery-log.js';
import { defineAdminEndpoint } from '../endpoint.js';
import { AccountPathSchema, DeliverySchema, deliveryView } from '../schemas.js';

export default defineAdminEndpoint({
  method: 'GET',
  url: '/admin/v1/accounts/:id/webhook/deliveries',
  operationId: 'listWebhookDeliveries',
  summary: "An account's recent webhook deliveries",
  description: `The last ${DELIVERY_LOG_SIZE} events for the account, newest first, paginated: state, attempts, last status, next attempt.`,
  tag: 'Webhooks',
  scope: 'admin:read',
  params: AccountPathSchema,
  query: PageQuerySchema,
  responses: { 200: { description: 'A page of deliveries.', schema: pageSchema(DeliverySchema, 'AdminDeliveryPage'), headers: { Link: 'RFC 8288 links to the first, previous, next and last pages.' } } },
  errors: ['not_found'],
  async handler({ params, query, webhooks }) {
    const { entries, total } = await webhooks.deliveries(params.id, (query.page - 1) * query.per_page, query.per_page);
    const path = `/admin/v1/accounts/${encodeURIComponent(params.id)}/webhook/deliveries`;
    const page = paginate(path, query, entries.map(deliveryView), total);
    return { status: 200, body: page.body, headers: page.headers };
  },
});
