/**
 * The PDF renderer's thread, dying on an invoice whose id is `crash` (an uncaught error, as a bug
 * in pdf-lib or an out-of-memory would end it): test/pdf/render-pool.test.ts.
 */
import { parentPort } from 'node:worker_threads';
// First: the renderer's listener must be there when the port starts delivering.
import '../../src/pdf/render-worker.js';

parentPort?.on('message', (job: { invoice: { id: string } }) => {
  // Thrown from a listener, it is uncaught: the thread ends before the render it began is done.
  if (job.invoice.id === 'crash') throw new Error('the thread dies');
});
