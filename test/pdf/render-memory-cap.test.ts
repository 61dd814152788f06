/**
 * A render thread's heap is capped: a hostile invoice that outgrows it fails alone, with the
 * reason a client can read (500 renderer_out_of_memory), and the next render gets a new thread.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { ApiError, problemDocument } from '../../src/errors.js';
import { InvoicePdfRenderer } from '../../src/pdf/render-pool.js';
import { eur, invoiceWith, ISSUER } from './pdf-text.js';
import { drawn } from './drawn-text.js';

const WORDS = Array.from({ length: 400 }, (_, index) => `слово${index}`).join(' ');
const HOSTILE = invoiceWith({ items: Array.from({ length: 1000 }, (_, index) => ({ description: `${index} ${WORDS}`, amount: eur('9.99'), taxed: false })) });

t.test('a render past the memory cap answers renderer_out_of_memory; the next one renders', async (t) => {
  // Enough for an ordinary invoice, far too little for the hostile one.
  const pool = new InvoicePdfRenderer({ threads: 1, queue: 2, memoryMb: 32 });
  t.teardown(() => pool.close());
  const failure = await pool.render(HOSTILE, ISSUER).then(
    () => undefined,
    (error: unknown) => error,
  );
  assert.ok(failure instanceof ApiError, `an ApiError: ${String(failure)}`);
  const problem = problemDocument(failure, 'r1', 'https://errors.example/');
  assert.deepEqual([problem.status, problem.reason, problem.title], [500, 'renderer_out_of_memory', 'Invoice PDF too large to render']);
  assert.match(problem.detail, /more than the 32 MB a renderer may use/);
  const [page] = await drawn(await pool.render(invoiceWith({ customer: { ...invoiceWith().customer, name: 'Анна' } }), ISSUER));
  assert.ok(page?.lines.includes('Анна'), 'a new thread renders the next invoice');
});
