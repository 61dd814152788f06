import { defineEndpoint } from '../../../http/endpoint.js';
import { OrderInputSchema, OrderSchema, type Order } from '../../../v1/schemas.js';

function created(order: Order) {
  return { status: 201, body: order, headers: { location: `/v1/orders/${order.id}` } };
}

export default defineEndpoint({
  method: 'POST',
  url: '/v1/orders',
  operationId: 'createOrder',
  summary: 'Place an order',
  description:
    'Requires `Idempotency-Key`. The order is validated against the product (billing cycle, configuration options) before anything is placed. ' +
    'If an earlier attempt with the same key timed out after reaching the backend, the gateway finds that order instead of placing a second one.',
  tag: 'Orders',
  scope: 'write:orders',
  idempotent: true,
  body: OrderInputSchema,
  responses: {
    201: { description: 'The order was placed.', schema: OrderSchema, headers: { Location: 'URL of the new order.' } },
  },
  errors: ['validation_failed', 'idempotency_conflict', 'idempotency_in_progress', 'replay_stale'],
  async handler({ body, caller, services, requestId, idempotencyKey, reconcile }) {
    const key = idempotencyKey as string;
    const ctx = { requestId, idempotencyKey: key };
    if (reconcile) {
      const earlier = await services.backend.findOrderByIdempotencyKey(caller.customer, key, ctx);
      if (earlier) return created(earlier);
    }
    return created(await services.backend.placeOrder(caller.customer, body, ctx));
  },
});
