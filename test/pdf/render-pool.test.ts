/**
 * Invoice PDFs are rendered off the event loop, by a bounded pool of worker threads
 * (src/pdf/render-pool.ts): a large render no longer holds up every other request of the process,
 * renders past the pool and its queue answer 503 `renderer_busy` with Retry-After, a render
 * queued for a client that has gone is dropped, and what the pool renders is byte for byte what
 * the renderer gives inline.
 */
import assert from 'node:assert/strict';
import { request as httpRequest, type ClientRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import type { Backend } from '../../src/backend/backend.js';
import { renderInvoicePdf } from '../../src/pdf/invoice-pdf.js';
import { InvoicePdfRenderer } from '../../src/pdf/render-pool.js';
import type { InvoiceDocument } from '../../src/v1/schemas.js';
import { bearer, buildTestGateway, type TestGateway } from '../helpers/gateway.js';
import { eur, invoiceWith, ISSUER, pageTexts } from './pdf-text.js';

const LONG_DESCRIPTION = Array.from({ length: 400 }, (_, index) => `word${index}`).join(' ');

/** The most a render draws: 1 000 items, each cut at its 20 lines. Seconds of CPU. */
const LARGE = invoiceWith({
  id: '7',
  items: Array.from({ length: 1000 }, () => ({ description: LONG_DESCRIPTION, amount: eur('9.99'), taxed: false })),
});
/** 1 000 one-line items: the layout is most of the work, and pdf-lib yields once while it writes the file. */
const MANY_SHORT = invoiceWith({
  id: '8',
  items: Array.from({ length: 1000 }, (_, index) => ({ description: `Service ${index}: VPS Small (monthly)`, amount: eur('9.99'), taxed: index % 2 === 0 })),
});

const unused = async (): Promise<never> => {
  throw new Error('not used by this test');
};

/** Turns of the event loop: none of them can come while the loop runs a render. */
async function turns(count: number): Promise<void> {
  for (let turn = 0; turn < count; turn += 1) await new Promise((resolve) => setImmediate(resolve));
}

interface FakeBackend extends Backend {
  /** Called with each invoice id asked for, before the invoice is returned. */
  onInvoice?: (id: string) => Promise<void> | void;
}

function fakeBackend(invoices: Record<string, InvoiceDocument>): FakeBackend {
  const backend: FakeBackend = {
    name: 'fake',
    capabilities: { serviceActions: [], reconcilesOrders: false },
    writeTimeoutMs: 1_000,
    // GET /v1/me: its answer comes twenty turns of the event loop after it is asked for.
    getAccount: async () => {
      await turns(20);
      return { name: 'Acme Hosting', company: null, email: 'ops@acme.example', status: 'active', currency: 'EUR' };
    },
    listProducts: unused,
    getProduct: unused,
    placeOrder: unused,
    findOrderByIdempotencyKey: unused,
    getOrder: unused,
    listServices: unused,
    getService: unused,
    getCredentials: unused,
    runServiceAction: unused,
    getBalance: unused,
    listInvoices: unused,
    getInvoiceDocument: async (_customer, id) => {
      await backend.onInvoice?.(id);
      const invoice = invoices[id];
      if (invoice === undefined) throw new Error(`no invoice ${id}`);
      return invoice;
    },
    ping: async () => true,
    close: async () => undefined,
  };
  return backend;
}

async function gatewayWith(backend: Backend, pdf?: Record<string, number>): Promise<TestGateway> {
  return buildTestGateway({ backend, ...(pdf ? { config: { pdf } } : {}) });
}

function getPdf(gw: TestGateway, id: string) {
  return gw.app.inject({ method: 'GET', url: `/v1/billing/invoices/${id}/pdf`, headers: bearer(gw.keys['acme:all']) });
}

t.test('a large render does not hold up the other requests of the process', async (t) => {
  const backend = fakeBackend({ 8: MANY_SHORT, 1: invoiceWith({ id: '1' }) });
  const gw = await gatewayWith(backend);
  t.teardown(() => gw.close());
  // A first render loads the renderer: the race below is the render's alone.
  assert.equal((await getPdf(gw, '1')).statusCode, 200);
  const finished: string[] = [];
  let cheap: Promise<unknown> | undefined;
  // The cheap request is sent as the render is given its invoice and issuer (read on the main
  // thread by an inline render, copied to its thread by the pool); it needs twenty turns of the event loop.
  const issuer = gw.config.issuer;
  const name = issuer.name;
  Object.defineProperty(issuer, 'name', {
    enumerable: true,
    get() {
      cheap ??= new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => gw.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(gw.keys['acme:all']) }))
        .then((answer) => {
          assert.equal(answer.statusCode, 200, answer.body);
          finished.push('me');
        });
      return name;
    },
  });
  const pdf = getPdf(gw, '8').then((answer) => {
    assert.equal(answer.statusCode, 200, answer.body);
    finished.push('pdf');
  });
  await pdf;
  await cheap;
  assert.deepEqual(finished, ['me', 'pdf'], 'the cheap request is answered while the PDF renders');
});

t.test('renders past the threads and the queue answer 503 renderer_busy with Retry-After, as documented', async (t) => {
  const backend = fakeBackend({ 7: LARGE, 1: invoiceWith({ id: '1' }), 2: invoiceWith({ id: '2' }) });
  const gw = await gatewayWith(backend, { renderThreads: 1, renderQueue: 1 });
  t.teardown(() => gw.close());
  // The three reach the renderer together: one renders, one waits, the third finds no place.
  let release!: () => void;
  const together = new Promise<void>((resolve) => (release = resolve));
  let asked = 0;
  backend.onInvoice = async () => {
    asked += 1;
    if (asked === 3) release();
    await together;
  };
  const [first, second, third] = await Promise.all([getPdf(gw, '7'), getPdf(gw, '1'), getPdf(gw, '2')]);
  assert.equal(first?.statusCode, 200);
  assert.equal(second?.statusCode, 200, 'the queued render is served once the first is done');
  assert.equal(third?.statusCode, 503, third?.body);
  assert.equal(third?.headers['content-type'], 'application/problem+json; charset=utf-8');
  const problem = third?.json();
  assert.equal(problem.reason, 'renderer_busy');
  assert.equal(problem.type, `${gw.config.problemTypeBase}renderer_busy`);
  assert.ok(Number(third?.headers['retry-after']) >= 1, 'Retry-After in seconds');

  const document = (await gw.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
  const unavailable = document.paths['/v1/billing/invoices/{id}/pdf'].get.responses['503'];
  assert.match(unavailable.description, /`renderer_busy`/);
  assert.ok(unavailable.headers['Retry-After'], 'Retry-After is documented');
  // Nothing else answers it.
  assert.doesNotMatch(document.paths['/v1/services'].get.responses['503'].description, /renderer_busy/);
});

t.test('one account cannot take every place: its renders past its share answer 503', async (t) => {
  const invoices = Object.fromEntries(['1', '2', '3', '4'].map((id) => [id, invoiceWith({ id })]));
  const backend = fakeBackend(invoices);
  // 1 thread + 7 queued: an account holds at most a quarter of the 8 places.
  const gw = await gatewayWith(backend, { renderThreads: 1, renderQueue: 7 });
  t.teardown(() => gw.close());
  let release!: () => void;
  const together = new Promise<void>((resolve) => (release = resolve));
  let asked = 0;
  backend.onInvoice = async () => {
    asked += 1;
    if (asked === 4) release();
    await together;
  };
  const answers = await Promise.all(['1', '2', '3', '4'].map((id) => getPdf(gw, id)));
  assert.deepEqual(answers.map((answer) => answer.statusCode), [200, 200, 503, 503]);
  const beta = await gw.app.inject({ method: 'GET', url: '/v1/billing/invoices/1/pdf', headers: bearer(gw.keys['beta:all']) });
  assert.equal(beta.statusCode, 200, 'another account still renders');
});

t.test('a queued render is dropped when its client goes away, and its place freed', async (t) => {
  const backend = fakeBackend({ 7: LARGE, 1: invoiceWith({ id: '1' }), 2: invoiceWith({ id: '2' }) });
  const gw = await gatewayWith(backend, { renderThreads: 1, renderQueue: 1 });
  t.teardown(() => gw.close());
  await gw.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = gw.app.server.address() as AddressInfo;
  const send = (id: string): { request: ClientRequest; answer: Promise<{ status: number; body: string }> } => {
    const request = httpRequest({ host: '127.0.0.1', port, path: `/v1/billing/invoices/${id}/pdf`, headers: bearer(gw.keys['acme:all']) });
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      request.on('response', (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('latin1') }));
      });
      request.on('error', reject);
    });
    request.end();
    return { request, answer };
  };
  const asked: string[] = [];
  let queued!: () => void;
  const secondQueued = new Promise<void>((resolve) => (queued = resolve));
  backend.onInvoice = (id) => {
    asked.push(id);
    if (id === '1') setImmediate(queued);
  };
  const large = send('7');
  // The large render runs; the second waits behind it until its client gives up.
  await new Promise<void>((resolve) => setTimeout(resolve, 0));
  while (!asked.includes('7')) await turns(1);
  const abandoned = send('1');
  abandoned.answer.catch(() => undefined);
  await secondQueued;
  await turns(5);
  abandoned.request.destroy();
  await new Promise<void>((resolve) => abandoned.request.once('close', () => resolve()));
  await turns(5);
  const next = send('2');
  const [largeAnswer, nextAnswer] = await Promise.all([large.answer, next.answer]);
  assert.equal(largeAnswer.status, 200);
  assert.equal(nextAnswer.status, 200, `the abandoned render's place was freed: ${nextAnswer.body}`);
});

t.test('the pool', async (t) => {
  const pool = new InvoicePdfRenderer({ threads: 1, queue: 4 });
  t.teardown(() => pool.close());

  t.test('renders the same bytes as the renderer inline', async () => {
    for (const invoice of [invoiceWith(), MANY_SHORT, invoiceWith({ number: '', status: 'paid', paid_on: '2026-02-03' })]) {
      const inline = Buffer.from(await renderInvoicePdf(invoice, ISSUER));
      const pooled = Buffer.from(await pool.render(invoice, ISSUER));
      assert.ok(inline.equals(pooled), `the same bytes for invoice ${invoice.number}`);
    }
  });

  t.test('copies to its thread only the items a render draws, and still counts the rest', async () => {
    const items = Array.from({ length: 100_000 }, (_, index) => ({ description: `Line ${index}`, amount: eur('0.01'), taxed: false }));
    const invoice = invoiceWith({ items });
    const inline = Buffer.from(await renderInvoicePdf(invoice, ISSUER));
    const pooled = Buffer.from(await pool.render(invoice, ISSUER));
    assert.ok(inline.equals(pooled), 'the same bytes');
    assert.ok((await pageTexts(pooled)).some((page) => page.includes('… and 99000 further items not shown')));
  });

  t.test('fails a render as the renderer inline does', async () => {
    const broken = { ...invoiceWith(), customer: undefined } as unknown as InvoiceDocument;
    const inline = await renderInvoicePdf(broken, ISSUER).then(() => undefined, (error: unknown) => error as Error);
    assert.ok(inline instanceof Error, 'the inline render fails');
    await assert.rejects(pool.render(broken, ISSUER), (error: unknown) => {
      assert.ok(error instanceof Error);
      assert.equal(error.constructor, inline.constructor);
      assert.equal(error.message, inline.message);
      return true;
    });
    assert.ok(Buffer.from(await pool.render(invoiceWith(), ISSUER)).length > 0, 'the thread renders on');
  });

  t.test('a thread that dies fails its render, not the process, and is replaced', async (t) => {
    const crashing = new InvoicePdfRenderer({ threads: 1, queue: 4, script: new URL('./crashing-render-worker.ts', import.meta.url) });
    t.teardown(() => crashing.close());
    await assert.rejects(crashing.render(invoiceWith({ id: 'crash' }), ISSUER), /renderer thread stopped/);
    const bytes = Buffer.from(await crashing.render(invoiceWith(), ISSUER));
    assert.ok(bytes.equals(Buffer.from(await renderInvoicePdf(invoiceWith(), ISSUER))), 'a new thread renders the next one');
  });

  t.test('close fails what waits and ends its threads; nothing renders after', async () => {
    const closing = new InvoicePdfRenderer({ threads: 1, queue: 4 });
    const running = closing.render(LARGE, ISSUER);
    const waiting = closing.render(invoiceWith(), ISSUER);
    const settled = Promise.allSettled([running, waiting]);
    await closing.close();
    const [first, second] = await settled;
    assert.equal(first?.status, 'rejected');
    assert.equal(second?.status, 'rejected');
    await assert.rejects(closing.render(invoiceWith(), ISSUER));
  });
});
