/**
 * The trusted-proxy test Fastify is given (trustedProxyTest) remembers its answers per address: it
 * must answer exactly as @fastify/proxy-addr's compiled test does, for every kind of entry and
 * address, also once its memory has started again.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import proxyAddr from '@fastify/proxy-addr';
import { trustedProxyTest } from '../../src/http/source-address.js';
import { bearer, buildTestGateway } from '../helpers/gateway.js';

const PROXIES = ['loopback', '10.0.0.0/8', '2001:db8::/32', '192.0.2.7'];
const ADDRESSES = [
  '127.0.0.1', '::1', '::ffff:127.0.0.1', '10.1.2.3', '::ffff:10.1.2.3', '11.0.0.1', '2001:db8::1', '2001:db9::1',
  '192.0.2.7', '192.0.2.8', 'not-an-address', '',
];

t.test('answers as the compiled test does, first time and remembered', async () => {
  const compiled = proxyAddr.compile(PROXIES);
  const cached = trustedProxyTest(PROXIES);
  for (let round = 0; round < 2; round++) {
    for (const address of ADDRESSES) assert.equal(cached(address, 0), compiled(address, 0), `${address} (round ${round})`);
  }
});

t.test('its memory is bounded and starts again without changing an answer', async () => {
  const compiled = proxyAddr.compile(PROXIES);
  const cached = trustedProxyTest(PROXIES);
  for (let n = 0; n < 25_000; n++) {
    const address = `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
    assert.equal(cached(address, 1), true);
  }
  for (const address of ADDRESSES) assert.equal(cached(address, 0), compiled(address, 0), address);
});

t.test('the gateway takes the client behind a trusted proxy, and the socket behind an untrusted one', async (t) => {
  const gw = await buildTestGateway({ config: { trustedProxies: ['127.0.0.1'] } });
  t.teardown(() => gw.close());
  const headers = { ...bearer(gw.keys['acme:all']), 'x-forwarded-for': '203.0.113.9' };
  for (const remoteAddress of ['127.0.0.1', '198.51.100.1', '127.0.0.1']) {
    assert.equal((await gw.app.inject({ method: 'GET', url: '/v1/me', remoteAddress, headers })).statusCode, 200);
  }
  await new Promise((resolve) => setImmediate(resolve));
  const sources = gw.logs.flatMap((line) => line.split('\n')).filter((line) => line.includes('request completed')).map((line) => JSON.parse(line).req.remote_address);
  assert.deepEqual(sources, ['203.0.113.9', '198.51.100.1', '203.0.113.9']);
});
