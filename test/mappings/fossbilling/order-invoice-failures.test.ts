/**
 * The order's invoice search (`invoice/get_list` by order_id, made when FOSSBilling no longer links
 * the invoice) answered badly, through the real transport over a socket: the order is not shown
 * without its payment status (null would say "no invoice"), and after order/create it leaves the
 * outcome unknown, so that the retry finds the order instead of placing another.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import type { Backend } from '../../../src/backend/backend.js';
import { createFossbillingBackend } from '../../../mappings/fossbilling/backend.js';
import { FossbillingConfigSchema } from '../../../mappings/fossbilling/config.js';
import { createFossbillingSeed, type FossbillingSimulator, startFossbillingSimulator } from '../../../simulators/fossbilling/server.js';
import type { FossbillingFault } from '../../../simulators/fossbilling/faults.js';
import { CTX, CUSTOMER, keyed, rejectsWith } from './fake-call.js';

const SEARCH = 'invoice/get_list';

/** Each failure of the search, and what the read reports; every one lasts until cleared (retries included). */
const FAILURES: Array<[string, FossbillingFault, 'upstream_error' | 'timeout' | 'unavailable']> = [
  ['HTTP 500 with an HTML page', { kind: 'http500', method: SEARCH }, 'upstream_error'],
  ['an HTML page with 200', { kind: 'html', method: SEARCH }, 'upstream_error'],
  ['an answer cut off halfway', { kind: 'malformed', method: SEARCH }, 'upstream_error'],
  ['a connection reset', { kind: 'reset', method: SEARCH }, 'upstream_error'],
  ['no answer within the deadline', { kind: 'latency', ms: 1_000, method: SEARCH }, 'timeout'],
  ['FOSSBilling\'s rate limiter', { kind: 'rate_limited', retryAfterSeconds: 30, method: SEARCH }, 'unavailable'],
];

t.test('FOSSBilling: an order whose invoice search fails', async (t) => {
  let sim: FossbillingSimulator;
  let backend: Backend;
  t.before(async () => {
    sim = await startFossbillingSimulator({ seed: createFossbillingSeed });
    backend = createFossbillingBackend(
      FossbillingConfigSchema.parse({ url: sim.url, apiToken: sim.apiToken, invoiceOption: 'issue-invoice', methodTimeoutsMs: { [SEARCH]: 250 }, circuitBreaker: { enabled: false } }),
    );
  });
  t.afterEach(async () => sim.clearFaults());
  t.teardown(async () => {
    await backend.close();
    await sim.close();
  });

  for (const [what, fault, kind] of FAILURES) {
    t.test(`GET /v1/orders/{id}: ${what} fails the read (${kind}); answered again, it shows the invoice`, async () => {
      // Seed order 1: active, its invoice 1 paid, so FOSSBilling links none and the search is made.
      sim.inject(fault);
      await rejectsWith(backend.getOrder(CUSTOMER, '1', CTX), kind);
      sim.clearFaults();
      const order = await backend.getOrder(CUSTOMER, '1', CTX);
      assert.deepEqual([order.invoice_id, order.payment_status], ['1', 'paid']);
    });
  }

  for (const [what, fault, kind] of FAILURES) {
    t.test(`POST /v1/orders: ${what} after order/create leaves the outcome unknown; the retry finds the one order`, async () => {
      const key = keyed(`k-search-${fault.kind}`);
      const before = sim.state.orders.length;
      sim.inject(fault);
      const error = await rejectsWith(backend.placeOrder(CUSTOMER, { product_id: '4', billing_cycle: 'free' }, key), kind);
      assert.equal(error.outcomeUnknown, true, 'the order was placed: a retry must not place it again');
      assert.equal(sim.state.orders.length, before + 1);
      sim.clearFaults();
      const found = await backend.findOrderByIdempotencyKey(CUSTOMER, key);
      assert.ok(found.kind === 'found', found.kind);
      assert.equal(found.order.id, String(sim.state.orders.at(-1)?.id));
      assert.equal(found.order.payment_status, null, 'a free order is placed without an invoice (order-placement.ts)');
      assert.equal(sim.state.orders.length, before + 1, 'placed once');
    });
  }
});
