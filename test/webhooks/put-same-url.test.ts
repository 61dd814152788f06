/**
 * `PUT /v1/webhooks` with the URL already set: the endpoint's run of failures goes on, so that
 * re-sending the URL never keeps a dead endpoint from being disabled after 5 days (README
 * "Webhooks"). A new URL, or a disabled endpoint enabled again, starts afresh.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { buildTestGateway, type TestGateway } from '../helpers/gateway.js';

const URL_A = 'https://hooks.example.com/a';
const URL_B = 'https://hooks.example.com/b';

t.test('a PUT of the URL already set keeps failing_since; a new URL or a re-enabled endpoint starts afresh', async (t) => {
  const gw: TestGateway = await buildTestGateway();
  t.teardown(() => gw.close());
  const headers = { authorization: `Bearer ${gw.keys['acme:all']}`, 'content-type': 'application/json' };
  const put = async (url: string) => assert.equal((await gw.app.inject({ method: 'PUT', url: '/v1/webhooks', headers, payload: { url } })).statusCode, 200);
  const view = async () => (await gw.app.inject({ method: 'GET', url: '/v1/webhooks', headers })).json();
  const since = new Date(Date.now() - 4 * 86_400_000).toISOString();
  const fail = async (url: string) => {
    await gw.stores.webhooks.recordDelivery('acme', url, { at: since, httpStatus: 500, attempts: 3 }, false);
    await gw.stores.webhooks.recordDelivery('acme', url, { at: new Date().toISOString(), httpStatus: 500, attempts: 4 }, false);
  };

  await put(URL_A);
  await fail(URL_A);
  await put(URL_A);
  const same = await view();
  assert.equal(same.last_delivery?.http_status, 500);
  assert.equal(same.failing_since, since, 'still failing since the first failure');

  await put(URL_B);
  assert.equal((await view()).failing_since, null, 'a new URL has no failures yet');

  await fail(URL_B);
  await gw.stores.webhooks.disable('acme', URL_B, 'failing');
  await put(URL_B);
  const enabled = await view();
  assert.equal(enabled.status, 'enabled');
  assert.equal(enabled.failing_since, null, 'enabled again: its run starts afresh, as the admin API\'s enable does');
});
