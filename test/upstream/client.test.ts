/**
 * The shared upstream client with a protocol of its own (JSON over GET/POST, nothing like WHMCS), to
 * show the machinery is backend-neutral: policy per action, coalescing, caching with invalidation
 * and per-call freshness, deadlines with "was it sent", the size cap and the circuit breaker.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { BackendError } from '../../src/backend/backend.js';
import { isPlainObject, parseJsonBody, unreadableAnswer } from '../../src/upstream/answers.js';
import { CircuitOpenError } from '../../src/upstream/breaker.js';
import { createUpstreamClient, type UpstreamProtocol } from '../../src/upstream/client.js';
import { readAction, writeAction } from '../../src/upstream/policy.js';

type Id = 'ping' | 'list' | 'catalog' | 'slow' | 'big' | 'create';

interface Upstream {
  server: Server;
  origin: string;
  hits: string[];
  status: number;
}

async function startUpstream(): Promise<Upstream> {
  const upstream: Upstream = { server: createServer(), origin: '', hits: [], status: 200 };
  upstream.server.on('request', (request, response) => {
    const path = request.url ?? '/';
    upstream.hits.push(path);
    const reply = (delayMs: number, body: string) =>
      setTimeout(() => {
        response.writeHead(upstream.status, { 'content-type': 'application/json' });
        response.end(body);
      }, delayMs);
    if (path.startsWith('/slow')) return reply(500, '{"ok":true}');
    if (path.startsWith('/big')) return reply(0, JSON.stringify({ blob: 'x'.repeat(4096) }));
    reply(path.startsWith('/list') ? 50 : 0, JSON.stringify({ ok: true, path, n: upstream.hits.length }));
  });
  await new Promise<void>((resolve) => upstream.server.listen(0, '127.0.0.1', resolve));
  upstream.origin = `http://127.0.0.1:${(upstream.server.address() as AddressInfo).port}`;
  return upstream;
}

const redact = (text: string) => text.split('s3cret').join('[redacted]');

const protocol: UpstreamProtocol<Id, Record<string, string>, Record<string, unknown>> = {
  label: 'Toy',
  actions: {
    ping: readAction('ping', 1_000),
    list: readAction('list', 1_000),
    catalog: readAction('catalog', 1_000, 60_000),
    slow: writeAction('slow', 100),
    big: readAction('big', 1_000),
    create: writeAction('create', 1_000, ['catalog']),
  },
  probe: 'ping',
  probeParams: {},
  request: (action, params) => ({
    method: action.safety === 'write' ? 'POST' : 'GET',
    path: `/${action.name}?${new URLSearchParams(params)}`,
    headers: { authorization: 'Bearer s3cret' },
  }),
  callKey: (action, params) => `${action.name}?${new URLSearchParams(params)}`,
  read(action, { statusCode, body }) {
    const parsed = parseJsonBody(body);
    if (statusCode !== 200 || !isPlainObject(parsed)) throw unreadableAnswer('Toy', action, `HTTP ${statusCode}`, redact);
    return parsed;
  },
  redact,
};

t.test('upstream client (backend-neutral)', async (t) => {
  let upstream: Upstream;
  let clock = 0;
  const client = () =>
    createUpstreamClient(protocol, {
      origin: upstream.origin,
      connections: 4,
      connectTimeoutMs: 1_000,
      maxResponseBytes: 1_024,
      circuitBreaker: { enabled: true, failureThreshold: 2, openMs: 1_000 },
      now: () => clock,
    });

  t.before(async () => {
    upstream = await startUpstream();
  });
  t.teardown(() => new Promise<void>((resolve) => upstream.server.close(() => resolve())));
  t.beforeEach(() => {
    upstream.hits.length = 0;
    upstream.status = 200;
    clock = 0;
  });

  t.test('coalesces identical concurrent reads into one request, and distinct ones not', async () => {
    const toy = client();
    const answers = await Promise.all([...Array(5).fill({ page: '1' }), { page: '2' }].map((params) => toy.call('list', params)));
    assert.deepEqual(upstream.hits.sort(), ['/list?page=1', '/list?page=2']);
    assert.equal(answers[0], answers[4], 'the five share one answer');
    await toy.close();
  });

  t.test('serves a cacheable read from cache until a write that invalidates it', async () => {
    const toy = client();
    await toy.call('catalog', {});
    await toy.call('catalog', {});
    assert.equal(upstream.hits.length, 1);
    await toy.call('create', {});
    await toy.call('catalog', {});
    assert.deepEqual(upstream.hits, ['/catalog?', '/create?', '/catalog?']);
    await toy.close();
  });

  t.test('past its TTL a cached answer is served stale, but a fresh read waits for the refresh (one request for both)', async () => {
    const toy = client();
    const first = await toy.call('catalog', {});
    clock += 60_000;
    const [stale, fresh] = await Promise.all([toy.call('catalog', {}), toy.call('catalog', {}, { freshness: 'fresh' })]);
    assert.equal(stale, first, 'stale-while-revalidate');
    assert.notEqual(fresh, first);
    assert.equal(await toy.call('catalog', {}, { freshness: 'fresh' }), fresh, 'within its TTL the cached answer is fresh');
    assert.equal(upstream.hits.length, 2);
    await toy.close();
  });

  t.test('a cached answer the mapping rejects is dropped, and only that answer: the next read asks again', async () => {
    const toy = client();
    const first = await toy.call('catalog', {});
    toy.reject('catalog', {}, { another: 'answer' });
    assert.equal(await toy.call('catalog', {}), first, 'an answer that is not the cached one drops nothing');
    toy.reject('catalog', {}, first);
    const second = await toy.call('catalog', {});
    assert.notEqual(second, first);
    assert.equal(await toy.call('catalog', {}), second, 'the new answer is cached');
    toy.reject('list', {}, first);
    assert.equal(upstream.hits.length, 2);
    await toy.close();
  });

  t.test('an uncached read is sent whatever is cached or in flight, and leaves the cache as it was', async () => {
    const toy = client();
    const cached = await toy.call('catalog', {});
    assert.notEqual(await toy.call('catalog', {}, { freshness: 'uncached' }), cached);
    assert.equal(await toy.call('catalog', {}), cached);
    const [joined, own] = await Promise.all([toy.call('list', {}), toy.call('list', {}, { freshness: 'uncached' })]);
    assert.notEqual(own, joined, 'not joined to the identical read in flight');
    assert.deepEqual(upstream.hits, ['/catalog?', '/catalog?', '/list?', '/list?']);
    await toy.close();
  });

  t.test('a write that times out after sending is an unknown outcome, never retried', async () => {
    const toy = client();
    const error = await toy.call('slow', {}).then(() => assert.fail('no timeout'), (caught: unknown) => caught);
    assert.ok(error instanceof BackendError);
    assert.equal(error.kind, 'timeout');
    assert.equal(error.outcomeUnknown, true);
    await sleep(600);
    assert.deepEqual(upstream.hits, ['/slow?'], 'sent once');
    await toy.close();
  });

  t.test('refuses an answer over the size cap as unreadable', async () => {
    const toy = client();
    await assert.rejects(toy.call('big', {}), (error: BackendError) => error.kind === 'upstream_error' && !error.outcomeUnknown);
    await toy.close();
  });

  t.test('opens the breaker on overload statuses, fails fast without sending, and probes before a write when half-open', async () => {
    const toy = client();
    upstream.status = 503;
    for (let i = 0; i < 2; i += 1) await assert.rejects(toy.call('list', { i: String(i) }));
    const before = upstream.hits.length;
    await assert.rejects(toy.call('create', {}), (error: unknown) => error instanceof CircuitOpenError && !error.outcomeUnknown);
    assert.equal(upstream.hits.length, before, 'nothing sent while open');

    upstream.status = 200;
    clock += 1_000;
    await toy.call('create', {});
    assert.deepEqual(upstream.hits.slice(before), ['/ping?', '/create?'], 'the probe goes first, then the write');
    await toy.close();
  });
});
