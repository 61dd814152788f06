/**
 * WORKERS=2: the primary holds the ops listener, so it counts the listener's requests itself; they
 * are in its /metrics as a single process has them (no `process` label), one family beside the
 * workers' sums.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { call } from '../helpers/http.js';
import { startRedisServer } from '../helpers/redis.js';
import { startGateway } from '../helpers/gateway-process.js';

t.test("a cluster's primary counts its ops listener's requests", async (t) => {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  const gateway = await startGateway(t, {}, { WORKERS: '2', REDIS_URL: redis.url });
  const ops = /ops \(metrics, probes\): (http:\/\/127\.0\.0\.1:\d+)/.exec(gateway.output())?.[1] as string;
  assert.equal((await call(ops, 'GET', '/livez')).status, 200);
  assert.equal((await call(ops, 'GET', '/livez')).status, 200);
  assert.equal((await call(ops, 'GET', '/nowhere')).status, 404);
  const metrics = await call(ops, 'GET', '/metrics');
  assert.equal(metrics.status, 200, metrics.text);
  const lines = metrics.text.split('\n').filter((line) => line.startsWith('gateway_ops_requests_total'));
  assert.deepEqual(lines.sort(), [
    'gateway_ops_requests_total{route="/livez",method="GET",status="200"} 2',
    'gateway_ops_requests_total{route="unmatched",method="GET",status="404"} 1',
  ]);
  assert.equal(metrics.text.match(/^# TYPE gateway_ops_requests_total /gm)?.length, 1, 'one family');
});
