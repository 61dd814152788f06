/**
 * Every account's requests reach the upstream from this gateway's address. Without the client's
 * address, an upstream gateway counts them all against one source IP (600 a minute by default,
 * contract §4) and audits credential reads under this gateway's address: past that, every account
 * is refused at once (503 here). So the address this gateway found for the client (the socket's, or
 * one from its own trusted proxies) goes in X-Forwarded-For, for an upstream that trusts this
 * gateway; the client's own X-Forwarded-For never leaves. And the operator line of an upstream 429
 * says which of its limits refused, so that a source-IP limit is not taken for the account's key.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer } from '../../helpers/gateway.js';
import { buildPassthroughGateway, json, problem, SERVICE } from './harness.js';

const get = (headers: Record<string, string>, remoteAddress: string) => ({ method: 'GET' as const, url: '/v1/services/7', headers, remoteAddress });

t.test("v1 passthrough: the client's address as this gateway found it goes upstream", async (t) => {
  t.test('an untrusted client: its socket address, never its own X-Forwarded-For', async (t) => {
    const gw = await buildPassthroughGateway();
    t.teardown(() => gw.close());
    gw.upstream.answer(json(200, SERVICE));
    const response = await gw.app.inject(get({ ...bearer(gw.keys['acme:all']), 'x-forwarded-for': '203.0.113.9' }, '198.51.100.7'));
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(gw.upstream.received.at(-1)?.headers['x-forwarded-for'], '198.51.100.7');
  });

  t.test('behind a trusted proxy: the client it names, and nothing of the chain before it', async (t) => {
    const gw = await buildPassthroughGateway({ config: { trustedProxies: ['10.0.0.1'] } });
    t.teardown(() => gw.close());
    gw.upstream.answer(json(200, SERVICE));
    const response = await gw.app.inject(get({ ...bearer(gw.keys['acme:all']), 'x-forwarded-for': '192.0.2.66, 203.0.113.9' }, '10.0.0.1'));
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(gw.upstream.received.at(-1)?.headers['x-forwarded-for'], '203.0.113.9');
  });

  t.test('forwardClientAddress off (an upstream run by someone else): no address of the client leaves', async (t) => {
    const gw = await buildPassthroughGateway({ v1: { forwardClientAddress: false } });
    t.teardown(() => gw.close());
    gw.upstream.answer(json(200, SERVICE));
    const response = await gw.app.inject(get({ ...bearer(gw.keys['acme:all']), 'x-forwarded-for': '203.0.113.9' }, '198.51.100.7'));
    assert.equal(response.statusCode, 200, response.body);
    const sent = gw.upstream.received.at(-1)?.headers ?? {};
    assert.equal(sent['x-forwarded-for'], undefined);
    assert.doesNotMatch(JSON.stringify(sent), /198\.51\.100\.7|203\.0\.113\.9/);
  });

  t.test("an upstream 429: the operator line names the limits it says were passed", async (t) => {
    const gw = await buildPassthroughGateway();
    t.teardown(() => gw.close());
    gw.upstream.answer(problem(429, 'rate_limited', { violated_policies: ['ip_minute'] }, { 'retry-after': '20' }));
    const response = await gw.app.inject(get(bearer(gw.keys['acme:all']), '198.51.100.7'));
    assert.equal(response.statusCode, 503, response.body);
    const line = gw.logs.find((each) => each.includes('rate-limits'));
    assert.ok(line, gw.logs.join(''));
    assert.match(line, /ip_minute/);
  });
});
