/**
 * Contract §2 / RFC 9457 §3 (gateway-standards §3.3, §5.5): a validation error's `pointer` is a JSON
 * Pointer (RFC 6901). A body that is not an object at all (an array, `null`, a string, none) was
 * answered with the pointer `/`, which RFC 6901 §5 reads as the member named "" — a field the
 * client never sent. The whole document is the empty pointer `""`. A client that maps pointers to
 * its form fields found nothing to mark; one that resolves them against its body found the wrong
 * thing. Fields keep their pointers (`/product_id`, `/query/page`).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer, buildTestGateway, type TestGateway } from '../helpers/gateway.js';
import { buildPassthroughGateway, problem } from '../mappings/v1/harness.js';

function post(gw: TestGateway, url: string, payload: string | undefined, idempotencyKey?: string) {
  return gw.app.inject({
    method: 'POST',
    url,
    headers: {
      ...bearer(gw.keys['acme:all']),
      ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
      ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
    },
    ...(payload === undefined ? {} : { payload }),
  });
}

t.test('a body that is not an object is pointed at as a whole: ""', async (t) => {
  const gw = await buildTestGateway();
  t.teardown(() => gw.close());
  for (const payload of ['[]', 'null', '"x"', '42', undefined]) {
    const response = await post(gw, '/v1/orders', payload, 'whole-body');
    assert.equal(response.statusCode, 400, String(payload));
    const { errors } = response.json() as { errors: Array<{ pointer: string }> };
    assert.deepEqual(errors.map((error) => error.pointer), [''], `body ${String(payload)}`);
  }
  const put = await gw.app.inject({ method: 'PUT', url: '/v1/webhooks', headers: { ...bearer(gw.keys['acme:all']), 'content-type': 'application/json' }, payload: '[1]' });
  assert.deepEqual(put.json().errors.map((error: { pointer: string }) => error.pointer), ['']);
});

t.test('fields keep their pointers', async (t) => {
  const gw = await buildTestGateway();
  t.teardown(() => gw.close());
  const missing = await post(gw, '/v1/orders', '{"billing_cycle":"monthly"}', 'fields');
  assert.deepEqual(missing.json().errors.map((error: { pointer: string }) => error.pointer), ['/product_id']);
  const unnamed = await post(gw, '/v1/orders', '{"product_id":"1","billing_cycle":"monthly","":1}', 'fields');
  assert.deepEqual(unnamed.json().errors.map((error: { pointer: string }) => error.pointer), ['/'], 'the member named "" is `/`');
  const page = await gw.app.inject({ method: 'GET', url: '/v1/services?page=0', headers: bearer(gw.keys['acme:all']) });
  assert.deepEqual(page.json().errors.map((error: { pointer: string }) => error.pointer), ['/query/page']);
});

t.test('v1 passthrough: an upstream error about the whole body keeps its pointer ""', async (t) => {
  const gw = await buildPassthroughGateway();
  t.teardown(() => gw.close());
  gw.upstream.answer(problem(422, 'validation_failed', { errors: [{ pointer: '', detail: 'the order as a whole is refused' }] }));
  const response = await gw.app.inject({
    method: 'POST',
    url: '/v1/orders',
    headers: { ...bearer(gw.keys['acme:all']), 'idempotency-key': 'whole-upstream' },
    payload: { product_id: '1', billing_cycle: 'monthly' },
  });
  assert.equal(response.statusCode, 422);
  assert.deepEqual(response.json().errors, [{ pointer: '', detail: 'the order as a whole is refused' }]);
});
