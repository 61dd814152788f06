/**
 * Every FOSSBilling call made for a Backend call carries that call's context (the request's trace,
 * which the upstream client sends as traceparent): reads, the write and its read-back alike. The
 * catalog, cached and shared by every request, is read without one.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { traceFromHeaders } from '../../../src/ops/trace.js';
import { backendWith, CTX, CUSTOMER, FakeCall, keyed } from './fake-call.js';
import * as answers from './fixtures/answers.js';

const trace = traceFromHeaders({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
const other = traceFromHeaders({});

t.test('reads carry the context of the call they serve', async () => {
  const fake = new FakeCall()
    .answer('client/get', answers.client)
    .answer('order/get_list', answers.page([answers.orderRow]));
  const backend = backendWith(fake);
  await backend.getBalance(CUSTOMER, { requestId: 'r1', trace });
  await backend.listServices(CUSTOMER, { page: 1, perPage: 10 }, { requestId: 'r2', trace: other });
  assert.deepEqual(
    fake.calls.map((call) => [call.method, call.context?.trace?.traceId]),
    [
      ['client/get', trace.traceId],
      ...fake.calls.slice(1).map((call) => [call.method, other.traceId]),
    ],
  );
  assert.ok(fake.calls.length >= 2);
});

t.test('a write and its read-back carry it too; a call without a trace sends none', async () => {
  const fake = new FakeCall()
    .answer('client/get', answers.client)
    .answer('product/get_list', answers.page([answers.hostingProduct]))
    .answer('order/get_list', answers.page([]))
    .answer('order/create', 7)
    .answer('order/get', { ...answers.order, id: 7 });
  const backend = backendWith(fake);
  await backend
    .placeOrder(CUSTOMER, { product_id: String(answers.hostingProduct.id), billing_cycle: 'monthly', hostname: 'site7.example.com' } as never, { ...keyed('key-1'), trace })
    .catch(() => undefined);
  const customerCalls = fake.calls.filter((call) => call.method !== 'product/get_list');
  assert.ok(customerCalls.some((call) => call.method === 'order/create'), fake.methods().join(' '));
  assert.ok(customerCalls.some((call) => call.method === 'order/get'), 'the read-back');
  for (const call of customerCalls) assert.equal(call.context?.trace?.traceId, trace.traceId, call.method);
  fake.calls.length = 0;
  await backend.getBalance(CUSTOMER, CTX);
  assert.equal(fake.calls[0]?.context?.trace, undefined);
});
