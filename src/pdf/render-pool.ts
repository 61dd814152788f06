/**
 * Invoice PDFs are rendered off the event loop, on a few threads of their own: one large invoice
 * takes seconds of CPU (the most a render draws, 1 000 items of 20 lines, 2–3.5 s), and on the main
 * thread every other request of the process waited for it, every reseller's and the health checks.
 * The threads start at the first render (pdf-lib loads into them, never into the main thread) and
 * are kept. A render that finds them all busy waits in a bounded queue; past it, or past its
 * account's share of it, the request answers 503 `renderer_busy` with Retry-After. A queued render
 * whose client has closed its connection, or whose request's deadline (`requestDeadlineMs`) came,
 * is dropped; a running one is finished (stopping its thread would cost a new one's start-up, and
 * a render is bounded). Each thread's heap is capped: a render that outgrows it ends the thread (V8
 * cannot recover a heap that is out of memory), answers 500 `renderer_out_of_memory`, and the next
 * render starts a new thread.
 */
import { Worker } from 'node:worker_threads';
import { ApiError } from '../errors.js';
import type { InvoiceDocument } from '../v1/schemas.js';
import type { FontFiles } from './fonts.js';
import type { InvoiceIssuer } from './invoice-pdf.js';
import { drawnItems } from './limits.js';

/** What a thread is sent: the invoice cut to its drawn items (limits.ts), and who issues it. */
export interface RenderJob {
  invoice: InvoiceDocument;
  issuer: InvoiceIssuer;
  hiddenItems: number;
}

/** What a thread is started with: the operator's fonts; `check` only loads them, says so, and waits to be ended. */
export interface ThreadData {
  fonts: FontFiles[];
  check?: boolean;
}

/** What a thread answers: the file, or what the render threw (copied as thrown: its class and message). */
export type RenderOutcome = { pdf: Uint8Array } | { error: unknown };

/** The client's connection: a render still queued when it closes is dropped. */
export interface ClientConnection {
  readonly destroyed: boolean;
  once(event: 'close', listener: () => void): unknown;
  off(event: 'close', listener: () => void): unknown;
}

export interface RendererOptions {
  /** Threads rendering at once. */
  threads: number;
  /** Renders that may wait for a thread; an account's wait in at most a quarter of these places (at least one). */
  queue: number;
  /** Families tried after the bundled font, for the scripts it lacks (config `pdf.fonts`). */
  fonts?: FontFiles[];
  /** Each thread's heap (old generation), in MB; unset, V8's default (a share of the machine's memory). */
  memoryMb?: number;
  /** The threads' entry; tests give one that fails in ways no invoice makes a render fail. */
  script?: URL;
}

/** Whom a render is for: the account (its share of the queue) and, when known, its client's connection. */
export interface RenderRequest {
  account: string;
  connection?: ClientConnection | undefined;
  /** The request's deadline (epoch ms): a render still queued then is dropped (503 renderer_busy). */
  deadline?: number | undefined;
}

/** A render takes from milliseconds to a few seconds: a retry after this finds the queue moved on. */
const RETRY_AFTER_SECONDS = '2';

/** The entry beside this module: render-worker.ts where tsx runs the sources (tests, npm run dev), .js as built. */
const WORKER_SCRIPT = new URL(import.meta.url.endsWith('.ts') ? './render-worker.ts' : './render-worker.js', import.meta.url);

interface Pending extends RenderRequest {
  job: RenderJob;
  resolve(pdf: Uint8Array): void;
  reject(error: unknown): void;
  /** While queued: drops the render when its client's connection closes. */
  drop?: () => void;
  /** While queued: drops the render at the request's deadline. */
  expiry?: NodeJS.Timeout;
}

/**
 * A thread running the script. Built, that is all; where tsx runs the sources (tests, npm run dev)
 * the thread registers tsx's loader first: tsx registers it in the main thread only, and a thread
 * inherits node's options but not loaders registered at run time.
 */
function newThread(script: URL, workerData: ThreadData, memoryMb: number | undefined): Worker {
  const options = { workerData, ...(memoryMb === undefined ? {} : { resourceLimits: { maxOldGenerationSizeMb: memoryMb } }) };
  if (!script.pathname.endsWith('.ts')) return new Worker(script, options);
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  return new Worker(`import(${tsx}).then((tsx) => { tsx.register(); return import(${JSON.stringify(script.href)}); })`, { eval: true, ...options });
}

function busy(detail: string): ApiError {
  return new ApiError('renderer_busy', detail, { headers: { 'retry-after': RETRY_AFTER_SECONDS } });
}

export class InvoicePdfRenderer {
  private readonly idle: Worker[] = [];
  /** Each thread at work and the render it does. */
  private readonly working = new Map<Worker, Pending>();
  private readonly queue: Pending[] = [];
  private readonly script: URL;
  private closed = false;

  constructor(private readonly options: RendererOptions) {
    this.script = options.script ?? WORKER_SCRIPT;
  }

  /** The invoice as a PDF, rendered on a thread: the same bytes as renderInvoicePdf gives. */
  render(invoice: InvoiceDocument, issuer: InvoiceIssuer, request: RenderRequest = { account: '' }): Promise<Uint8Array> {
    return new Promise((resolve, reject) => {
      if (this.closed) throw new Error('the PDF renderer is closed');
      const { invoice: drawn, hiddenItems } = drawnItems(invoice);
      const pending: Pending = { ...request, job: { invoice: drawn, issuer, hiddenItems }, resolve, reject };
      const thread = this.idle.pop() ?? (this.threadCount() < this.options.threads ? this.startThread() : undefined);
      if (thread !== undefined) return this.run(thread, pending);
      if (this.queue.length >= this.options.queue) {
        throw busy('Every invoice PDF renderer of this gateway is busy and its queue is full; retry shortly.');
      }
      const share = Math.max(1, Math.floor(this.options.queue / 4));
      if (this.queue.filter((queued) => queued.account === request.account).length >= share) {
        throw busy(`This account already has ${share} invoice PDFs waiting to be rendered; retry once they are done.`);
      }
      this.enqueue(pending);
    });
  }

  /**
   * Loads the fonts on a thread of their own, ended once they loaded; rejects with what is wrong
   * with a file (unreadable, not a font). At boot, so that a bad `pdf.fonts` stops it.
   */
  async checkFonts(): Promise<void> {
    const thread = newThread(this.script, { fonts: this.options.fonts ?? [], check: true }, this.options.memoryMb);
    try {
      await new Promise<void>((resolve, reject) => {
        thread.once('message', () => resolve());
        thread.once('error', reject);
        thread.once('exit', (code) => reject(new Error(`the font check thread stopped (exit code ${code})`)));
      });
    } finally {
      await thread.terminate();
    }
  }

  /** Fails what waits and ends every thread (what they render fails too). */
  async close(): Promise<void> {
    this.closed = true;
    for (const pending of this.queue.splice(0)) {
      this.dequeued(pending);
      pending.reject(new Error('the PDF renderer is closed'));
    }
    const threads = [...this.idle, ...this.working.keys()];
    this.idle.length = 0;
    await Promise.all(threads.map((thread) => thread.terminate()));
  }

  private threadCount(): number {
    return this.idle.length + this.working.size;
  }

  private startThread(): Worker {
    const thread = newThread(this.script, { fonts: this.options.fonts ?? [] }, this.options.memoryMb);
    let failure: unknown;
    thread.on('message', (outcome: RenderOutcome) => this.answered(thread, outcome));
    // An uncaught error ends the thread (then 'exit'); listened to, it does not end the process.
    thread.on('error', (error) => (failure = error));
    thread.once('exit', (code) => this.lost(thread, code, failure));
    return thread;
  }

  private run(thread: Worker, pending: Pending): void {
    thread.ref();
    this.working.set(thread, pending);
    try {
      thread.postMessage(pending.job);
    } catch (error) {
      // Data that cannot be copied to the thread (nothing a mapping returns): the render fails, the thread goes on.
      this.working.delete(thread);
      pending.reject(error);
      this.next(thread);
    }
  }

  private answered(thread: Worker, outcome: RenderOutcome): void {
    const pending = this.working.get(thread);
    if (pending === undefined) return;
    this.working.delete(thread);
    if ('pdf' in outcome) pending.resolve(outcome.pdf);
    else pending.reject(outcome.error);
    this.next(thread);
  }

  /** A thread that ended (a crash, or close): its render fails; what waits gets a new thread. */
  private lost(thread: Worker, code: number, failure: unknown): void {
    const pending = this.working.get(thread);
    this.working.delete(thread);
    const idleAt = this.idle.indexOf(thread);
    if (idleAt >= 0) this.idle.splice(idleAt, 1);
    if ((failure as { code?: unknown } | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY') {
      pending?.reject(
        new ApiError('renderer_out_of_memory', `Rendering this invoice as a PDF needed more than the ${this.options.memoryMb ?? 'default'} MB a renderer may use; nothing was rendered.`),
      );
    } else {
      pending?.reject(new Error(`the PDF renderer thread stopped (exit code ${code})`, { cause: failure }));
    }
    if (!this.closed && this.queue.length > 0) this.next(this.startThread());
  }

  /** The thread takes the next render whose client is still there, or rests. */
  private next(thread: Worker): void {
    for (let pending = this.queue.shift(); pending !== undefined; pending = this.queue.shift()) {
      this.dequeued(pending);
      if (pending.connection?.destroyed === true) {
        pending.reject(this.gone());
        continue;
      }
      this.run(thread, pending);
      return;
    }
    // A resting thread does not keep the process alive.
    thread.unref();
    this.idle.push(thread);
  }

  private enqueue(pending: Pending): void {
    this.queue.push(pending);
    const { connection, deadline } = pending;
    const drop = (why: ApiError) => {
      const at = this.queue.indexOf(pending);
      if (at < 0) return;
      this.queue.splice(at, 1);
      this.dequeued(pending);
      pending.reject(why);
    };
    if (deadline !== undefined) {
      const late = () => drop(busy('Every invoice PDF renderer of this gateway stayed busy until this request ran out of time; nothing was rendered.'));
      pending.expiry = setTimeout(late, Math.max(0, deadline - Date.now()));
    }
    if (connection === undefined) return;
    pending.drop = () => drop(this.gone());
    connection.once('close', pending.drop);
  }

  private dequeued(pending: Pending): void {
    clearTimeout(pending.expiry);
    if (pending.drop) pending.connection?.off('close', pending.drop);
  }

  /** No one reads this answer; it is what the access line and the metrics record (after the 499). */
  private gone(): ApiError {
    return busy('The client closed its connection while its invoice PDF waited to be rendered; nothing was rendered.');
  }
}
