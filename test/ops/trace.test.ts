/**
 * W3C trace context: traceparent validated as the Level 1 Recommendation says, the trace carried
 * to the upstream with the gateway's own span id, and the trace id in every log line of the request.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { captureTraceHeaders, parseTraceparent, traceFromHeaders, traceHeaders } from '../../src/ops/trace.js';
import { bearer, buildTestGateway, type TestGateway } from '../helpers/gateway.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const VALID = `00-${TRACE_ID}-${PARENT_ID}-01`;

t.test('traceparent parsing', async (t) => {
  t.test('accepts a valid version 00 header', async () => {
    assert.deepEqual(parseTraceparent(VALID), { traceId: TRACE_ID, parentId: PARENT_ID, flags: '01' });
  });

  t.test('refuses what the spec calls invalid', async () => {
    for (const header of [
      VALID.toUpperCase(),
      `00-${'0'.repeat(32)}-${PARENT_ID}-01`,
      `00-${TRACE_ID}-${'0'.repeat(16)}-01`,
      `ff-${TRACE_ID}-${PARENT_ID}-01`,
      `${VALID}-extra`,
      `00-${TRACE_ID}-${PARENT_ID}-1`,
      `00_${TRACE_ID}-${PARENT_ID}-01`,
      `00-${TRACE_ID.slice(1)}x-${PARENT_ID}-01`,
      `0-${TRACE_ID}-${PARENT_ID}-01`,
      `${VALID}, ${VALID}`,
      '',
      undefined,
    ]) {
      assert.equal(parseTraceparent(header), undefined, String(header));
    }
  });

  t.test('reads a later version as 00 when its first fields have the 00 shape', async () => {
    assert.deepEqual(parseTraceparent(`cc-${TRACE_ID}-${PARENT_ID}-01-what-the-future-holds`), { traceId: TRACE_ID, parentId: PARENT_ID, flags: '01' });
    assert.equal(parseTraceparent(`cc-${TRACE_ID}-${PARENT_ID}-01.what`), undefined);
  });

  t.test('continues a valid trace with a span of its own, and starts a new one otherwise (tracestate dropped)', async () => {
    const continued = traceFromHeaders({ traceparent: VALID, tracestate: 'vendor=abc' });
    assert.equal(continued.traceId, TRACE_ID);
    assert.equal(continued.parentId, PARENT_ID);
    assert.match(continued.spanId, /^[0-9a-f]{16}$/);
    assert.notEqual(continued.spanId, PARENT_ID);
    assert.deepEqual(traceHeaders(continued), { traceparent: `00-${TRACE_ID}-${continued.spanId}-01`, tracestate: 'vendor=abc' });

    const restarted = traceFromHeaders({ traceparent: VALID.toUpperCase(), tracestate: 'vendor=abc' });
    assert.match(restarted.traceId, /^[0-9a-f]{32}$/);
    assert.notEqual(restarted.traceId, TRACE_ID);
    assert.deepEqual(traceHeaders(restarted), { traceparent: `00-${restarted.traceId}-${restarted.spanId}-00` });
  });
});

t.test('trace headers for deferred work (webhook deliveries)', async (t) => {
  t.test('are the given request\'s trace, and a new valid trace without one', async () => {
    const trace = traceFromHeaders({ traceparent: VALID });
    assert.deepEqual(captureTraceHeaders(trace), traceHeaders(trace));
    const outside = parseTraceparent(captureTraceHeaders(undefined).traceparent);
    assert.ok(outside);
    assert.notEqual(outside.traceId, TRACE_ID);
  });
});

t.test('trace context through the gateway', async (t) => {
  let gw: TestGateway;
  t.before(async () => {
    gw = await buildTestGateway({ whmcs: { circuitBreaker: { enabled: true, failureThreshold: 1, openMs: 60_000 } } });
  });
  t.teardown(() => gw.close());

  /** The log lines of one request: its own logger's, and the shared loggers' written while it ran. */
  function linesOf(requestId: string, traceId: string): Array<Record<string, unknown>> {
    return gw.logs.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.request_id === requestId || line.trace_id === traceId);
  }

  async function me(headers: Record<string, string>) {
    const callsBefore = gw.simulator.calls.length;
    const response = await gw.app.inject({ method: 'GET', url: '/v1/me', headers: { ...bearer(gw.keys['acme:all']), ...headers } });
    return { response, upstream: gw.simulator.calls.slice(callsBefore) };
  }

  t.test('passes the trace to the upstream with its own span id, and logs the trace id on every line', async () => {
    const { response, upstream } = await me({ traceparent: VALID, tracestate: 'rojo=00f067aa0ba902b7' });
    assert.equal(response.statusCode, 200, response.body);
    assert.ok(upstream.length >= 1);
    const sent = new Set(upstream.map((call) => call.traceparent));
    assert.equal(sent.size, 1, 'one span for the request');
    const [traceparent] = [...sent];
    const parsed = parseTraceparent(traceparent);
    assert.equal(parsed?.traceId, TRACE_ID);
    assert.equal(parsed?.flags, '01');
    assert.notEqual(parsed?.parentId, PARENT_ID, 'the gateway is the parent of its calls');

    const lines = linesOf(String(response.headers['x-request-id']), TRACE_ID);
    assert.ok(lines.length >= 1, 'the access line');
    for (const line of lines) assert.equal(line.trace_id, TRACE_ID, JSON.stringify(line));
  });

  t.test('starts a new trace when the traceparent is invalid, and uses it everywhere', async () => {
    const { response, upstream } = await me({ traceparent: `00-${TRACE_ID}-${'0'.repeat(16)}-01` });
    assert.equal(response.statusCode, 200);
    const parsed = parseTraceparent(upstream[0]?.traceparent);
    assert.ok(parsed);
    assert.notEqual(parsed.traceId, TRACE_ID);
    assert.equal(parsed.flags, '00');
    const lines = linesOf(String(response.headers['x-request-id']), parsed.traceId);
    assert.ok(lines.length >= 1);
    for (const line of lines) assert.equal(line.trace_id, parsed.traceId);
  });

  t.test('lines of shared loggers written for the request carry its trace id, once', async () => {
    const logged = gw.logs.length;
    // The read's connection broken on the first attempt and on its retry.
    gw.simulator.inject({ kind: 'reset', action: 'GetClientsDetails', times: 2 });
    const { response } = await me({ traceparent: VALID });
    assert.ok(response.statusCode >= 500);
    const retryLine = gw.logs.slice(logged).find((line) => line.includes('retrying once'));
    assert.ok(retryLine, 'the upstream client logged the retry');
    assert.equal(JSON.parse(retryLine).trace_id, TRACE_ID);
    const breakerLine = gw.logs.slice(logged).find((line) => line.includes('circuit breaker opened'));
    assert.ok(breakerLine, 'the upstream client logged the breaker opening');
    assert.equal(JSON.parse(breakerLine).trace_id, TRACE_ID);
    for (const line of gw.logs.slice(logged)) assert.ok((line.match(/"trace_id"/g) ?? []).length <= 1, line);
  });
});
