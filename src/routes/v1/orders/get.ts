import { defineEndpoint } from '../../../http/endpoint.js';
import { OrderSchema } from '../../../v1/schemas.js';
import { IdParamsSchema } from '../params.js';

export default defineEndpoint({
  method: 'GET',
  url: '/v1/orders/:id',
  operationId: 'getOrder',
  summary: 'Status of an own order',
  tag: 'Orders',
  scope: 'read:orders',
  params: IdParamsSchema,
  responses: { 200: { description: 'The order.', schema: OrderSchema } },
  errors: ['not_found'],
  async handler({ params, caller, deps, call }) {
    return { status: 200, body: await deps.backend.getOrder(caller.customer, params.id, call) };
  },
});
