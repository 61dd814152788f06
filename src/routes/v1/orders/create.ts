import type { TraceContext } from '../../../ops/trace.js';
import { BackendError } from '../../../backend/backend.js';
import type { EndpointDeps } from '../../../http/endpoint.js';
import { defineEndpoint } from '../../../http/endpoint.js';
import { requireAttempt } from '../../../http/idempotency.js';
import { OrderInputSchema, OrderSchema, type Order } from '../../../v1/schemas.js';

const orderHeaders = (order: Order) => ({ location: `/v1/orders/${encodeURIComponent(order.id)}` });

function created(order: Order) {
  return { status: 201, body: order, headers: orderHeaders(order) };
}

/**
 * While a self-check that orders depend on fails (the backend could not find an order again after a
 * timeout), ordering stops: nothing is sent upstream, and the key is left free for a later retry.
 */
function refuseWhileMisconfigured(deps: EndpointDeps): void {
  const blocker = deps.doctor.blockerOf('orders');
  if (!blocker) return;
  throw new BackendError(
    'misconfigured',
    'Ordering is temporarily unavailable while the operator fixes the billing backend\'s setup. Nothing was ordered; retry later with the same Idempotency-Key.',
    {
      operatorMessage: `order refused: doctor check "${blocker.id}" fails: ${blocker.detail} Fix: ${blocker.fix ?? '-'}`,
      retryAfterMs: deps.doctor.retryAfterMs(),
    },
  );
}

/**
 * order.created at once (the snapshot remembers it, so the change detector does not report it again).
 * `readAt`: before the backend was called (it reads the order back then), so that a later state the
 * detector recorded meanwhile is not taken back by this older read.
 */
async function announce(deps: EndpointDeps, accountId: string, order: Order, trace: TraceContext | undefined, readAt: number): Promise<Order> {
  const { events } = deps.webhooks;
  await events.safely(() => events.observe(accountId, { kind: 'order', resource: order }, { trace, readAt }), accountId);
  return order;
}

export default defineEndpoint({
  method: 'POST',
  url: '/v1/orders',
  operationId: 'createOrder',
  summary: 'Place an order',
  description:
    'Requires `Idempotency-Key`. The order is validated against the product (billing cycle, configuration options) before anything is placed. ' +
    'If an earlier attempt with the same key timed out after reaching the backend, the gateway finds that order instead of placing a second one; ' +
    'it orders again only with proof that the earlier attempt placed nothing, else it answers 503 `outcome_unknown` (409 `idempotency_in_progress` while that attempt may still be running). ' +
    'A backend that cannot look orders up by key always answers such a retry with 503 `outcome_unknown`. ' +
    'While the backend is set up in a way that would not let it find such an order (see `doctor`), ordering answers 503 `backend_misconfigured` with Retry-After and nothing is ordered.',
  tag: 'Orders',
  scope: 'write:orders',
  idempotent: true,
  body: OrderInputSchema,
  responses: {
    201: { description: 'The order was placed.', schema: OrderSchema, headers: { Location: 'URL of the new order.' } },
  },
  answerHeaders: ({ body }) => orderHeaders(body as Order),
  errors: ['validation_failed', 'idempotency_conflict', 'idempotency_in_progress', 'replay_stale', 'backend_misconfigured', 'outcome_unknown'],
  async handler({ body, caller, deps, call, idempotencyKey, attempt }) {
    refuseWhileMisconfigured(deps);
    const { recordId, reconcile, beforeWrite, outcomeUnknown } = requireAttempt(attempt);
    const ctx = { ...call, idempotencyKey: idempotencyKey as string, idempotencyRecord: recordId };
    const readAt = Date.now();
    if (reconcile) {
      // An earlier attempt sent its order: order again only with proof that it placed nothing.
      if (!deps.backend.capabilities.reconcilesOrders) {
        throw outcomeUnknown(`backend ${deps.backend.name} cannot find an order by its Idempotency-Key`);
      }
      const earlier = await deps.backend.findOrderByIdempotencyKey(caller.customer, { ...ctx, beforeWrite });
      if (earlier.kind === 'found') return created(await announce(deps, caller.account.id, earlier.order, call.trace, readAt));
      if (earlier.kind === 'unknown') throw outcomeUnknown(earlier.reason);
    }
    const order = await deps.backend.placeOrder(caller.customer, body, { ...ctx, beforeWrite });
    return created(await announce(deps, caller.account.id, order, call.trace, readAt));
  },
});
