/**
 * The slow-backend part's floor for its invoice pages, in its own process like the gateway: bare
 * Fastify relaying each page to the same upstream as the same GetInvoices call (an undici
 * Pool sized as the gateway's), its answer read with JSON.parse and the rows sent back with
 * JSON.stringify. No key, no limit, no validation, no mapping: what any Node server relaying these
 * pages adds on this machine at the same rate, against which the gateway's own addition is read.
 *
 * Env: RELAY_PORT, RELAY_UPSTREAM (origin), RELAY_IDENTIFIER and RELAY_SECRET (the simulator's
 * API credentials). GET /invoices?userid=&page=&per_page= answers the page; GET /ready answers 200.
 */
import Fastify from 'fastify';
import { Pool } from 'undici';
import { FORM_TYPE, GET_INVOICES_PATH, getInvoicesForm } from './get-invoices.js';

const upstream = String(process.env.RELAY_UPSTREAM);
const credentials = { identifier: String(process.env.RELAY_IDENTIFIER), secret: String(process.env.RELAY_SECRET) };
const pool = new Pool(upstream, { connections: 256, pipelining: 1 });

const app = Fastify({ logger: false });
app.get('/ready', (_request, reply) => {
  reply.send('ready');
});
app.get<{ Querystring: { userid: string; page: string; per_page: string } }>('/invoices', async (request, reply) => {
  const { userid, page, per_page: perPage } = request.query;
  const form = getInvoicesForm(credentials, userid, Number(page), Number(perPage));
  const answer = await pool.request({ method: 'POST', path: GET_INVOICES_PATH, headers: { 'content-type': FORM_TYPE }, body: form });
  const parsed = (await answer.body.json()) as { totalresults?: unknown; invoices?: { invoice?: unknown[] } };
  return reply.header('content-type', 'application/json; charset=utf-8').send(JSON.stringify({ data: parsed.invoices?.invoice ?? [], total: parsed.totalresults }));
});

const port = Number(process.env.RELAY_PORT ?? 0);
await app.listen({ host: '127.0.0.1', port });
process.stdout.write(`listening ${(app.server.address() as { port: number }).port}\n`);
process.on('SIGTERM', () => {
  void app.close().then(async () => {
    await pool.close();
    process.exit(0);
  });
});
