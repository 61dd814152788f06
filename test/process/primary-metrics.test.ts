/**
 * WORKERS=2: the primary's /metrics carries the primary's own process metrics (memory, CPU, event
 * loop) beside the workers' sums, labelled process="primary". Only the workers' were there: the
 * process that holds the sandbox, the admin API and the ops listener was not measured.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { call } from '../helpers/http.js';
import { startRedisServer } from '../helpers/redis.js';
import { startGateway } from '../helpers/gateway-process.js';

t.test("the primary's memory and CPU, labelled, beside the workers' sums", async (t) => {
  const redis = await startRedisServer();
  t.teardown(() => redis.stop());
  const gateway = await startGateway(t, {}, { WORKERS: '2', REDIS_URL: redis.url });
  const ops = /ops \(metrics, probes\): (http:\/\/127\.0\.0\.1:\d+)/.exec(gateway.output())?.[1] as string;
  const metrics = await call(ops, 'GET', '/metrics');
  assert.equal(metrics.status, 200, metrics.text);
  const resident = metrics.text.split('\n').filter((line) => line.startsWith('gateway_process_resident_memory_bytes'));
  assert.equal(resident.filter((line) => /^gateway_process_resident_memory_bytes\{process="primary"\} [1-9]/.test(line)).length, 1, resident.join('\n'));
  assert.equal(resident.filter((line) => /^gateway_process_resident_memory_bytes [1-9]/.test(line)).length, 1, `the workers' sum stays: ${resident.join('\n')}`);
  assert.match(metrics.text, /^gateway_process_cpu_seconds_total\{process="primary"\} /m);
  assert.equal(metrics.text.match(/^# TYPE gateway_process_resident_memory_bytes /gm)?.length, 1, 'one family');
});
