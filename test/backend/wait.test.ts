/**
 * A request's wait on its backend (src/backend/wait.ts): calls in flight together count once, a
 * failed call counts as a finished one, and a call still in flight counts up to now (the clock is
 * the test's, so the figures are exact); the routes' backend times each request method on the
 * wait of the context it is given, and leaves everything else as it is.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import type { Backend, CallContext } from '../../src/backend/backend.js';
import { BackendWait, timedBackend } from '../../src/backend/wait.js';

function deferred(): { promise: Promise<string>; resolve: (value: string) => void; reject: (error: Error) => void } {
  let resolve!: (value: string) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<string>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise, resolve, reject };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

t.test('overlapping calls count once, from the first start to the last end', async () => {
  let now = 1_000;
  const wait = new BackendWait(() => now);
  const first = deferred();
  const second = deferred();
  assert.equal(wait.on(first.promise), first.promise, 'the answer is handed back as it is');
  now = 1_010;
  wait.on(second.promise);
  now = 1_050;
  first.resolve('a');
  await settled();
  assert.equal(wait.ms(), 50, 'one still in flight: counted up to now');
  now = 1_080;
  second.resolve('b');
  await settled();
  now = 2_000;
  assert.equal(wait.ms(), 80, 'not 120 (50 + 70): the calls overlapped');
});

t.test('calls one after the other add up; a failed call ends its wait too', async () => {
  let now = 0;
  const wait = new BackendWait(() => now);
  const first = deferred();
  wait.on(first.promise);
  now = 200;
  first.reject(new Error('upstream down'));
  await assert.rejects(first.promise, /upstream down/);
  now = 230;
  const second = deferred();
  wait.on(second.promise);
  now = 330;
  second.resolve('ok');
  await settled();
  now = 400;
  assert.equal(wait.ms(), 300, 'the 30 ms between the calls are not a wait');
});

t.test('no call: no wait', async () => {
  assert.equal(new BackendWait(() => 5).ms(), 0);
});

t.test("the routes' backend: request methods timed on their context's wait, the rest untouched", async () => {
  let now = 0;
  const wait = new BackendWait(() => now);
  const pending = deferred();
  const seen: unknown[][] = [];
  const ping = async () => true;
  const backend = {
    name: 'fake',
    getBalance: (...args: unknown[]) => {
      seen.push(args);
      return pending.promise;
    },
    ping,
  } as unknown as Backend;
  const timed = timedBackend(backend);
  assert.equal(timed.name, 'fake');
  assert.equal(timed.ping, ping, 'not a request method: the backend’s own');
  const customer = { accountId: 'acme', upstreamId: '1' };
  const ctx: CallContext = { requestId: 'r1', wait };
  const answer = timed.getBalance(customer, ctx);
  assert.deepEqual(seen, [[customer, ctx]], 'called with the same arguments');
  now = 120;
  pending.resolve('balance');
  assert.equal(await answer, 'balance');
  now = 500;
  assert.equal(wait.ms(), 120);
  // Without a wait in its context the call is not timed, and still answered.
  now = 600;
  assert.equal(await timed.getBalance(customer, { requestId: 'r2' }), 'balance');
  assert.equal(wait.ms(), 120);
});
