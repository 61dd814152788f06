/**
 * A JSON body nested tens of thousands deep that holds a lone surrogate escape (`"\ud800"`) still
 * fits the 64 KiB limit. The lone-surrogate check walked the parsed value recursively and overflowed
 * the stack on it: the client got the "not valid JSON" 400 (a RangeError taken for a syntax error)
 * rather than the lone-surrogate one that the same escape earns in a shallow body.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer, buildTestGateway } from '../helpers/gateway.js';

const DEPTH = 30_000;

t.test('a deeply nested body with a lone surrogate escape gets the lone-surrogate 400', async (t) => {
  const gw = await buildTestGateway();
  t.teardown(() => gw.close());

  const put = (payload: string) =>
    gw.app.inject({
      method: 'PUT',
      url: '/v1/webhooks',
      headers: { ...bearer(gw.keys['acme:all']), 'content-type': 'application/json' },
      payload,
    });

  const shallow = await put('{"url":"https://hooks.example.com/a\\ud800b"}');
  assert.equal(shallow.statusCode, 400, shallow.body);
  const expected = shallow.json().detail as string;
  assert.match(expected, /surrogate/);

  for (const [name, payload] of [
    ['in arrays', `{"url":${'['.repeat(DEPTH)}"\\ud800"${']'.repeat(DEPTH)}}`],
    ['in a property name of nested objects', `{"url":${'{"a":'.repeat(DEPTH / 5)}{"\\udc00":1}${'}'.repeat(DEPTH / 5)}}`],
  ] as const) {
    t.test(name, async () => {
      const response = await put(payload);
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(response.json().reason, 'invalid_request');
      assert.equal(response.json().detail, expected, 'the same answer as the shallow escape');
      assert.ok(!gw.logs.some((line) => line.includes('Maximum call stack')), 'no stack overflow logged');
    });
  }

  t.test('a deep body with a well-formed pair is read, and answered by validation', async () => {
    const response = await put(`{"url":${'['.repeat(DEPTH)}"\\ud83d\\ude00"${']'.repeat(DEPTH)}}`);
    assert.equal(response.statusCode, 400, response.body);
    assert.deepEqual(response.json().errors?.map((error: { pointer: string }) => error.pointer), ['/url']);
  });
});

t.test('a long flat array under a larger configured body limit is walked too', async (t) => {
  const gw = await buildTestGateway({ config: { bodyLimitBytes: 2 * 1024 * 1024 } });
  t.teardown(() => gw.close());
  const items = new Array(500_000).fill('0').join(',');
  const response = await gw.app.inject({
    method: 'PUT',
    url: '/v1/webhooks',
    headers: { ...bearer(gw.keys['acme:all']), 'content-type': 'application/json' },
    payload: `{"url":["\\ud800",${items}]}`,
  });
  assert.equal(response.statusCode, 400, response.body);
  assert.match(response.json().detail, /surrogate/);
});
