/**
 * A thread of the invoice PDF renderer (render-pool.ts): renders the jobs it is sent, one at a
 * time, and answers each with the file's bytes or with the error the render threw. Its fonts are
 * read and parsed once, before the first job is taken.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { FontBook } from './fonts.js';
import { renderInvoicePdf } from './invoice-pdf.js';
import type { RenderJob, RenderOutcome, ThreadData } from './render-pool.js';

const port = parentPort;
if (port === null) throw new Error('render-worker.ts runs as a worker thread of the PDF renderer');
const data = (workerData ?? { fonts: [] }) as ThreadData;
// A file that fails here ends the thread with its message: at boot (check), that stops the gateway.
const book = await FontBook.load(data.fonts);
if (data.check === true) port.postMessage('fonts loaded');

port.on('message', async (job: RenderJob) => {
  let outcome: RenderOutcome;
  try {
    outcome = { pdf: await renderInvoicePdf(job.invoice, job.issuer, job.hiddenItems, book) };
  } catch (error) {
    outcome = { error };
  }
  if ('pdf' in outcome) {
    // Moved, not copied: pdf-lib writes the file into a buffer of its own.
    port.postMessage(outcome, [outcome.pdf.buffer as ArrayBuffer]);
    return;
  }
  try {
    port.postMessage(outcome);
  } catch {
    // An error that cannot be copied (a function in it) still fails the render, by its words.
    port.postMessage({ error: new Error(String((outcome.error as Error | undefined)?.message ?? outcome.error)) });
  }
});
