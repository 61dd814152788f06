/**
 * The PDF render pool (src/pdf/render-pool.ts) at its edges: the queue's exact bound, a crashed
 * thread's queued renders going on, a render whose client left before it was queued, and the
 * close listener given back once a render leaves the queue.
 */
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import t from 'tap';
import { ApiError } from '../../src/errors.js';
import { InvoicePdfRenderer } from '../../src/pdf/render-pool.js';
import { eur, invoiceWith, ISSUER } from './pdf-text.js';

const LONG_DESCRIPTION = Array.from({ length: 400 }, (_, index) => `word${index}`).join(' ');
/** Seconds of CPU: the thread stays busy while the test fills the queue. */
const LARGE = invoiceWith({ id: '7', items: Array.from({ length: 1000 }, () => ({ description: LONG_DESCRIPTION, amount: eur('9.99'), taxed: false })) });

const isBusy = (error: unknown) => error instanceof ApiError && error.reason === 'renderer_busy';

/** A client connection that can be closed before or after its render is queued. */
class Connection extends EventEmitter {
  destroyed = false;
}

t.test('the queue holds exactly its size: the next render is refused', async (t) => {
  const pool = new InvoicePdfRenderer({ threads: 1, queue: 4 });
  t.teardown(() => pool.close());
  const running = pool.render(LARGE, ISSUER, { account: 'a0' });
  // Four accounts, one place each (no account's share is reached).
  const queued = ['a1', 'a2', 'a3', 'a4'].map((account) => pool.render(invoiceWith(), ISSUER, { account }));
  await assert.rejects(pool.render(invoiceWith(), ISSUER, { account: 'a5' }), isBusy);
  for (const render of [running, ...queued]) assert.ok((await render).length > 0);
});

t.test('a thread that dies with renders queued: a new thread renders them', async (t) => {
  const crashing = new InvoicePdfRenderer({ threads: 1, queue: 4, script: new URL('../pdf/crashing-render-worker.ts', import.meta.url) });
  t.teardown(() => crashing.close());
  const dying = crashing.render(invoiceWith({ id: 'crash' }), ISSUER, { account: 'a' });
  const waiting = crashing.render(invoiceWith(), ISSUER, { account: 'b' });
  await assert.rejects(dying, /renderer thread stopped/);
  const outcome = await Promise.race([waiting.then((pdf) => pdf.length), new Promise((resolve) => setTimeout(resolve, 10_000, 'still waiting'))]);
  assert.ok(typeof outcome === 'number' && outcome > 0, `the queued render: ${String(outcome)}`);
});

t.test('a render whose client left before its turn is not rendered; the close listener is given back', async (t) => {
  const pool = new InvoicePdfRenderer({ threads: 1, queue: 4 });
  t.teardown(() => pool.close());
  const running = pool.render(LARGE, ISSUER, { account: 'a' });
  // Already closed when queued: its 'close' came before, only `destroyed` tells.
  const gone = new Connection();
  gone.destroyed = true;
  const abandoned = pool.render(invoiceWith(), ISSUER, { account: 'b', connection: gone });
  const staying = new Connection();
  const kept = pool.render(invoiceWith(), ISSUER, { account: 'c', connection: staying });
  assert.equal(staying.listenerCount('close'), 1, 'listened to while queued');
  await running;
  await assert.rejects(abandoned, isBusy);
  assert.ok((await kept).length > 0);
  assert.equal(staying.listenerCount('close'), 0, 'no listener left on a kept-alive connection');
});
