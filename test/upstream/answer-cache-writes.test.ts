/**
 * After a write, no read answers with what the upstream held before it (read-your-writes for the
 * reseller: an order placed, a service stopped, then listed). A read that was already on its way
 * when the write went out may have been answered before the write ran, so:
 * - a read made after the write is not coalesced with it, but sent anew;
 * - its answer is not cached for the actions the write invalidates.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { createAnswerCache } from '../../src/upstream/answer-cache.js';

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

t.test('a read made after a write is not coalesced with one in flight before it', async () => {
  const cache = createAnswerCache<string>();
  const before = deferred<string>();
  const first = cache.coalesced('GetClientsProducts', 'client=1', () => before.promise);
  cache.written(['GetClientsProducts']);
  let sentAgain = false;
  const second = cache.coalesced('GetClientsProducts', 'client=1', async () => {
    sentAgain = true;
    return 'after the write';
  });
  before.resolve('before the write');
  assert.equal(await first, 'before the write');
  assert.equal(await second, 'after the write');
  assert.ok(sentAgain);
});

t.test('an answer loaded before an invalidating write is not cached', async () => {
  let now = 1_000_000;
  const cache = createAnswerCache<string>(() => now);
  const before = deferred<string>();
  const noStale = () => assert.fail('no stale answer expected');
  const first = cache.cached('GetProducts', 60_000, 'all', () => before.promise, noStale);
  cache.written(['GetProducts']);
  before.resolve('catalog before the write');
  assert.equal(await first, 'catalog before the write', 'the caller that asked before still gets its answer');
  now += 1;
  const later = await cache.cached('GetProducts', 60_000, 'all', async () => 'catalog after the write', noStale);
  assert.equal(later, 'catalog after the write');
});
