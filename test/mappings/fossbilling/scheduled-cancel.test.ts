/**
 * `order/cancel` with `cancel_at_period_end` (FOSSBilling 0.8.5 and later) keeps the order `active` and
 * marks it with the meta `cancel_at_period_end` = '1' until its gateway subscription ends
 * (src/modules/Order/Service.php@56a0871:1438-1456 scheduleCancellationFromOrder, meta at :1451;
 * 0.8.5 :1263-1275); the cancellation clears it (:1503-1506). `order/get` and `order/get_list` show the
 * meta pairs (toApiArray :473, getBatchForApi :571). The v1 service showed no cancellation pending:
 * `cancellation_requested: false` for a service FOSSBilling will cancel at the end of its period.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { ServiceSchema } from '../../../src/v1/schemas.js';
import { backendWith, CTX, CUSTOMER, FakeCall } from './fake-call.js';
import * as answers from './fixtures/answers.js';

const scheduled = { ...answers.order, meta: { ...answers.order.meta, cancel_at_period_end: '1' } };
const scheduledRow = { ...answers.orderRow, meta: { ...answers.orderRow.meta, cancel_at_period_end: '1' } };

const fake = () =>
  new FakeCall()
    .answer('client/get', answers.client)
    .answer('order/get', scheduled)
    .answer('order/get_list', answers.page([scheduledRow]));

t.test('a cancellation FOSSBilling scheduled for the end of the period is shown as requested, effective at expiry', async () => {
  const backend = backendWith(fake());
  const service = ServiceSchema.parse(await backend.getService(CUSTOMER, '7', CTX));
  assert.equal(service.status, 'active');
  assert.equal(service.cancellation_requested, true);
  assert.equal(service.cancellation_effective_on, '2026-12-01');
  const [listed] = (await backend.listServices(CUSTOMER, { page: 1, perPage: 25 }, CTX)).items;
  assert.equal(listed?.cancellation_requested, true);
});

t.test('without the meta (or with it at 0) nothing is pending', async () => {
  const backend = backendWith(fake().answer('order/get', { ...answers.order, meta: { cancel_at_period_end: '0' } }));
  const service = await backend.getService(CUSTOMER, '7', CTX);
  assert.equal(service.cancellation_requested, false);
  assert.equal(service.cancellation_effective_on, null);
});
