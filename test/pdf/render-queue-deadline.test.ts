/**
 * A render that waits in the PDF queue past its request's deadline is dropped (503 renderer_busy,
 * with Retry-After), not rendered for a client whose request has run out of time.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { ApiError } from '../../src/errors.js';
import { InvoicePdfRenderer } from '../../src/pdf/render-pool.js';
import { eur, invoiceWith, ISSUER } from './pdf-text.js';

const LONG_DESCRIPTION = Array.from({ length: 400 }, (_, index) => `word${index}`).join(' ');
/** Seconds of CPU: the one thread stays busy well past the queued render's deadline. */
const LARGE = invoiceWith({ id: '7', items: Array.from({ length: 1000 }, () => ({ description: LONG_DESCRIPTION, amount: eur('9.99'), taxed: false })) });

t.test('a queued render whose request deadline passes is dropped', async (t) => {
  const pool = new InvoicePdfRenderer({ threads: 1, queue: 4 });
  t.teardown(() => pool.close());
  const running = pool.render(LARGE, ISSUER, { account: 'a' });
  const late = pool.render(invoiceWith(), ISSUER, { account: 'b', deadline: Date.now() + 50 });
  const kept = pool.render(invoiceWith(), ISSUER, { account: 'c' });
  await assert.rejects(late, (error: unknown) => error instanceof ApiError && error.reason === 'renderer_busy' && error.headers['retry-after'] !== undefined);
  assert.ok((await running).length > 0);
  assert.ok((await kept).length > 0, 'the render without a deadline is still done');
});
