/**
 * Requests the router itself refuses (a malformed percent-encoding in the path, a path parameter
 * over `maxParamLength`) are answered 400 by `frameworkErrors`, which Fastify runs outside the
 * route's hooks and the log controller: they were neither in `gateway_http_requests_total`
 * ("requests answered") nor in the access log ("one access line per request"). A scanner's or a
 * broken client's stream of them was invisible to the operator's 4xx panels and to the logs.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { buildOpsApp } from '../../src/ops/server.js';
import { bearer, buildTestGateway } from '../helpers/gateway.js';

t.test("the router's own refusals are counted and logged as other answers are", async (t) => {
  const gw = await buildTestGateway();
  const ops = buildOpsApp(gw.app);
  t.teardown(async () => {
    await ops.close();
    await gw.close();
  });
  const headers = bearer(gw.keys['acme:all'] as string);
  for (const url of ['/v1/services/%zz', '/%', `/v1/services/${'9'.repeat(150)}`]) {
    const answer = await gw.app.inject({ method: 'GET', url, headers });
    assert.equal(answer.statusCode, 400, url);
    assert.equal(answer.json().type.endsWith('invalid_request'), true, answer.body);
  }
  const text = (await ops.inject({ method: 'GET', url: '/metrics' })).body;
  assert.match(text, /^gateway_http_requests_total\{route="unmatched",method="GET",status="400"\} 3$/m);
  assert.match(text, /^gateway_http_request_duration_seconds_count\{route="unmatched",method="GET",status="400"\} 3$/m);

  const lines = gw.logs.filter((line) => line.includes('"msg":"request completed"')).map((line) => JSON.parse(line) as { req: { url: string }; res: { statusCode: number } });
  assert.deepEqual(
    lines.map((line) => [line.req.url, line.res.statusCode]),
    [['/v1/services/%zz', 400], ['/%', 400], [`/v1/services/${'9'.repeat(150)}`, 400]],
  );
});
