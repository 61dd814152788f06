/**
 * Readiness (/readyz, src/ops/server.ts): each dependency's check is bounded as /v1/health's is, so
 * a probe gets an answer in time and a cluster's primary hears every worker; a ping that does not
 * answer within the bound counts as down. The upstream, shared by every instance, makes the app
 * unready only when `ops.readyRequiresUpstream` asks; the store always does.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { PING_TIMEOUT_MS } from '../../src/ops/bounded-ping.js';
import { Readiness } from '../../src/ops/server.js';

const answering = (value: boolean, afterMs = 0) => () => new Promise<boolean>((resolve) => setTimeout(() => resolve(value), afterMs).unref());

t.test('a dependency slower than the bound is down; the others keep their own answer', async () => {
  const slow = new Readiness({ stores: { ping: answering(true) }, backend: { ping: answering(true, PING_TIMEOUT_MS * 3) }, upstreamRequired: true });
  assert.deepEqual(await slow.check(), { ready: false, store: 'ok', upstream: 'down', shuttingDown: false });
  const quick = new Readiness({ stores: { ping: answering(false) }, backend: { ping: answering(true, 10) }, upstreamRequired: true });
  assert.deepEqual(await quick.check(), { ready: false, store: 'down', upstream: 'ok', shuttingDown: false });
  const thrown = new Readiness({ stores: { ping: answering(true) }, backend: { ping: () => Promise.reject(new Error('boom')) }, upstreamRequired: true });
  assert.deepEqual(await thrown.check(), { ready: false, store: 'ok', upstream: 'down', shuttingDown: false });
});

t.test('by default an upstream that does not answer is reported, and the app stays ready; a store that does not answer is not', async () => {
  const upstreamDown = new Readiness({ stores: { ping: answering(true) }, backend: { ping: answering(false) }, upstreamRequired: false });
  assert.deepEqual(await upstreamDown.check(), { ready: true, store: 'ok', upstream: 'down', shuttingDown: false });
  const storeDown = new Readiness({ stores: { ping: answering(false) }, backend: { ping: answering(true) }, upstreamRequired: false });
  assert.deepEqual(await storeDown.check(), { ready: false, store: 'down', upstream: 'ok', shuttingDown: false });
});

t.test('shutting down: unready at once, nothing checked', async () => {
  const readiness = new Readiness({ stores: { ping: answering(true) }, backend: { ping: answering(true) }, upstreamRequired: false });
  assert.equal((await readiness.check()).ready, true);
  readiness.beginShutdown();
  assert.deepEqual(await readiness.check(), { ready: false, store: 'unchecked', upstream: 'unchecked', shuttingDown: true });
});
