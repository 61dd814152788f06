/**
 * `npm run bench:parsing`: what reading an upstream answer and shaping a v1 answer cost, per answer,
 * in CPU time and bytes allocated (the young generation's load, which sets how often the gateway
 * collects). The answers are pages built from the example rows of WHMCS's documentation and of
 * FOSSBilling's source (the recorded answers of the mappings' tests), 25 rows where the endpoint pages.
 *
 * Per answer, against baselines doing the same work in the same run:
 * - JSON.parse of the answer's bytes: the floor, what reading the answer at all costs;
 * - the answer's schema with zod's own parser (as the gateway runs it), then compiled (`z.compile`);
 * - the mapping from the parsed answer to the v1 body (dates, sums, zones: one case has WHMCS's
 *   clock in Europe/Berlin, where every paid invoice's time goes through Intl);
 *   compiling is not a gain on the larger answers (their transforms each stay a call, in one large
 *   function), so the gateway does not compile these;
 * - the v1 output schema (which strips what the contract does not name) the same two ways (the
 *   gateway runs it compiled: src/http/compiled-schema.ts), and JSON.stringify of its output, which
 *   follows it.
 * And per WHMCS field type, its plain zod form against the one-step form the schemas use, as fields
 * of an object parsed by zod's own parser, as the answers are; and a zone's offset at an instant,
 * through Intl against the hours the gateway remembers (src/backend/time-zone.ts).
 *
 * Allocation is read from the heap with no collection in between (the script runs itself with a
 * young generation large enough for a batch, and drops a batch a collection fell into).
 */
import { spawnSync } from 'node:child_process';
import { PerformanceObserver } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { mapInvoice, mapService, mapAccount, mapProduct } from '../mappings/whmcs/map.js';
import { ClientDetailsAnswer, ProductsAnswer, ServicesAnswer } from '../mappings/whmcs/parse.js';
import { InvoicesAnswer } from '../mappings/whmcs/parse-invoices.js';
import * as fields from '../mappings/whmcs/parse-fields.js';
import { wallClockOffsetMs, zoneOffsetMs } from '../src/backend/time-zone.js';
import { paginate } from '../src/http/pagination.js';
import listInvoices from '../src/routes/v1/billing/invoices.js';
import listServices from '../src/routes/v1/services/list.js';
import listProducts from '../src/routes/v1/products/list.js';
import { AccountSchema } from '../src/v1/schemas.js';
import * as answers from '../test/mappings/whmcs/fixtures/answers.js';
import * as fossAnswers from '../test/mappings/fossbilling/fixtures/answers.js';
import { mapInvoice as mapFossInvoice, mapService as mapFossService } from '../mappings/fossbilling/map.js';
import { InvoiceListAnswer, OrderListAnswer } from '../mappings/fossbilling/parse.js';
import { ratio, table } from './report.js';

const YOUNG_MB = 256;
const { values: flags } = parseArgs({ options: { rounds: { type: 'string', default: '7' }, help: { type: 'boolean', default: false } } });
if (flags.help) {
  process.stdout.write(`npm run bench:parsing [-- --rounds N]
  --rounds N   timed batches per figure; the fastest is kept (default 7)
`);
  process.exit(0);
}
const ROUNDS = Number(flags.rounds);
if (!Number.isInteger(ROUNDS) || ROUNDS < 1) {
  process.stderr.write(`--rounds must be a positive integer, not ${flags.rounds}\n`);
  process.exit(2);
}

// The measuring process needs a young generation that holds a whole batch, and gc().
if (!process.execArgv.includes('--expose-gc')) {
  const child = spawnSync(process.execPath, ['--expose-gc', `--max-semi-space-size=${YOUNG_MB}`, `--min-semi-space-size=${YOUNG_MB}`, ...process.execArgv, fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(child.status ?? 1);
}
const gc = (globalThis as { gc?: () => void }).gc as () => void;

/** When each collection started (performance.now()): a batch one started in has no allocation figure. */
const collections: number[] = [];
new PerformanceObserver((list) => collections.push(...list.getEntries().map((entry) => entry.startTime))).observe({ entryTypes: ['gc'] });
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 5));

interface Figure {
  us: number;
  kb: number;
}

/** µs per call (the fastest batch) and KB allocated per call (a batch no collection fell into). */
async function measure(run: () => unknown): Promise<Figure> {
  const started = process.hrtime.bigint();
  let warmed = 0;
  while (warmed < 2_000 && process.hrtime.bigint() - started < 1_000_000_000n) {
    run();
    warmed += 1;
  }
  const batch = Math.max(20, Math.round(warmed / 10));
  let us = Infinity;
  let kb = Number.NaN;
  for (let round = 0; round < ROUNDS; round += 1) {
    gc();
    await settle();
    const from = performance.now();
    const heap = process.memoryUsage().heapUsed;
    const start = process.hrtime.bigint();
    for (let index = 0; index < batch; index += 1) run();
    const elapsed = Number(process.hrtime.bigint() - start) / 1_000 / batch;
    const allocated = (process.memoryUsage().heapUsed - heap) / 1024 / batch;
    const to = performance.now();
    await settle();
    us = Math.min(us, elapsed);
    if (!collections.some((at) => at >= from && at <= to)) kb = allocated;
  }
  return { us, kb };
}

const page = <T>(row: T, count: number, vary: (row: T, index: number) => T): T[] => Array.from({ length: count }, (_, index) => vary(row, index));

const QUERY = { page: 1, per_page: 25 };
const HOUR_MS = 3_600_000;
const invoiceRows = page(answers.invoiceRow, 25, (row, index) => ({ ...row, id: index + 1, invoicenum: `INV-${index + 1}` }));
/** Paid, each on its own day: paid_at is the one invoice time converted from the server's clock. */
const paidInvoiceRows = invoiceRows.map((row, index) => ({ ...row, status: 'Paid', datepaid: `2016-0${1 + (index % 9)}-${10 + (index % 18)} 14:06:34`, tax2: '0.50' }));
const serviceRows = page(answers.service, 25, (row, index) => ({ ...row, id: String(index + 1), domain: `vps${index + 1}.example.com` }));

interface Case {
  name: string;
  bytes: string;
  schema: z.ZodType;
  /** The answer as the gateway answers it, from the parsed upstream answer. */
  toV1(parsed: unknown): unknown;
  v1Schema: z.ZodType;
}

const responseSchema = (endpoint: { responses: Record<number, { schema?: z.ZodType }> }): z.ZodType => endpoint.responses[200]?.schema as z.ZodType;

const CASES: Case[] = [
  {
    name: 'GetInvoices, 25 rows → InvoicePage',
    bytes: JSON.stringify({ ...answers.invoices, totalresults: 60, numreturned: 25, invoices: { invoice: invoiceRows } }),
    schema: InvoicesAnswer,
    toV1: (parsed) => paginate('/v1/billing/invoices', QUERY, (parsed as z.output<typeof InvoicesAnswer>).invoices.map((row) => mapInvoice(row, 'USD', 'UTC')), 60).body,
    v1Schema: responseSchema(listInvoices),
  },
  {
    name: 'GetInvoices, 25 paid rows, WHMCS clock in Europe/Berlin → InvoicePage',
    bytes: JSON.stringify({ ...answers.invoices, totalresults: 60, numreturned: 25, invoices: { invoice: paidInvoiceRows } }),
    schema: InvoicesAnswer,
    toV1: (parsed) => paginate('/v1/billing/invoices', QUERY, (parsed as z.output<typeof InvoicesAnswer>).invoices.map((row) => mapInvoice(row, 'USD', 'Europe/Berlin')), 60).body,
    v1Schema: responseSchema(listInvoices),
  },
  {
    name: 'GetClientsProducts, 25 rows → ServicePage',
    bytes: JSON.stringify({ result: 'success', clientid: '1', serviceid: null, pid: null, domain: null, totalresults: 60, startnumber: 0, numreturned: 25, products: { product: serviceRows } }),
    schema: ServicesAnswer,
    toV1: (parsed) => paginate('/v1/services', QUERY, (parsed as z.output<typeof ServicesAnswer>).products.map((row) => mapService(row, 'USD', undefined)), 60).body,
    v1Schema: responseSchema(listServices),
  },
  {
    name: 'GetProducts, 5 products → ProductList',
    bytes: JSON.stringify(answers.catalog),
    schema: ProductsAnswer,
    toV1: (parsed) => ({ data: (parsed as z.output<typeof ProductsAnswer>).map(mapProduct) }),
    v1Schema: responseSchema(listProducts),
  },
  {
    name: 'FOSSBilling invoice/get_list, 25 rows → InvoicePage',
    bytes: JSON.stringify(fossAnswers.page(page(fossAnswers.invoice, 25, (row, index) => ({ ...row, id: index + 1 })), 60, 25)),
    schema: InvoiceListAnswer,
    toV1: (parsed) => paginate('/v1/billing/invoices', QUERY, (parsed as z.output<typeof InvoiceListAnswer>).list.map((row) => mapFossInvoice(row, 'USD', 'UTC')), 60).body,
    v1Schema: responseSchema(listInvoices),
  },
  {
    name: 'FOSSBilling order/get_list, 25 rows → ServicePage',
    bytes: JSON.stringify(fossAnswers.page(page(fossAnswers.orderRow, 25, (row, index) => ({ ...row, id: String(index + 1) })), 60, 25)),
    schema: OrderListAnswer,
    toV1: (parsed) => paginate('/v1/services', QUERY, (parsed as z.output<typeof OrderListAnswer>).list.map((row) => mapFossService(row, 'USD')), 60).body,
    v1Schema: responseSchema(listServices),
  },
  {
    name: 'GetClientsDetails → Account',
    bytes: JSON.stringify(answers.clientDetails),
    schema: ClientDetailsAnswer,
    toV1: (parsed) => ({ id: 'acme', ...mapAccount(parsed as z.output<typeof ClientDetailsAnswer>) }),
    v1Schema: AccountSchema,
  },
];

const fmt = (figure: Figure): string[] => [figure.us.toFixed(2), Number.isNaN(figure.kb) ? 'n/a' : figure.kb.toFixed(1)];

async function answersTable(): Promise<void> {
  const rows = [['answer (per answer)', 'µs', 'KB', 'zod / compiled']];
  for (const entry of CASES) {
    const compiledSchema = z.compile(entry.schema);
    const compiledV1 = z.compile(entry.v1Schema);
    const parsed = compiledSchema.parse(JSON.parse(entry.bytes));
    const v1 = entry.toV1(parsed);
    // The compiled parsers give what the schemas' own do.
    if (JSON.stringify(entry.schema.parse(JSON.parse(entry.bytes))) !== JSON.stringify(parsed)) throw new Error(`${entry.name}: compiled answer differs`);
    if (JSON.stringify(entry.v1Schema.parse(v1)) !== JSON.stringify(compiledV1.parse(v1))) throw new Error(`${entry.name}: compiled v1 output differs`);
    const value = JSON.parse(entry.bytes) as unknown;
    const floor = await measure(() => JSON.parse(entry.bytes));
    const answerZod = await measure(() => entry.schema.parse(value));
    const answerCompiled = await measure(() => compiledSchema.parse(value));
    const mapping = await measure(() => entry.toV1(parsed));
    const v1Zod = await measure(() => entry.v1Schema.parse(v1));
    const v1Compiled = await measure(() => compiledV1.parse(v1));
    const stringify = await measure(() => JSON.stringify(v1));
    rows.push(
      [`${entry.name} (${entry.bytes.length} B)`, '', '', ''],
      ['  JSON.parse of the answer (floor)', ...fmt(floor), ''],
      ['  answer schema, zod (gateway)', ...fmt(answerZod), ''],
      ['  answer schema, compiled', ...fmt(answerCompiled), ratio(answerZod.us, answerCompiled.us)],
      ['  mapping to v1 (the mapping\'s map.ts)', ...fmt(mapping), ''],
      ['  v1 output schema, zod', ...fmt(v1Zod), ''],
      ['  v1 output schema, compiled (gateway)', ...fmt(v1Compiled), ratio(v1Zod.us, v1Compiled.us)],
      ['  JSON.stringify of the v1 output', ...fmt(stringify), ''],
    );
  }
  console.log(table(rows));
}

const FIELD_SAMPLES: Array<[keyof typeof fields.plain & keyof typeof fields, unknown]> = [
  ['Id', 1],
  ['Id', '1'],
  ['Decimal', '15.95'],
  ['Decimal', 15.95],
  ['LocalTime', '2016-01-08 14:06:34'],
  ['LocalTime', '0000-00-00 00:00:00'],
  ['TextOrNone', 'Test Client'],
  ['Flag', '1'],
];

async function fieldsTable(): Promise<void> {
  const rows = [['field type (per field, inside an object)', 'plain µs', 'plain KB', 'one step µs', 'one step KB', 'plain / one step']];
  for (const [name, value] of FIELD_SAMPLES) {
    // Inside an object, as the answers hold them: a parse call's own cost is not the field's.
    const input = { a: value, b: value, c: value, d: value, e: value, f: value, g: value, h: value, i: value, j: value };
    const shape = (type: z.ZodType) => z.object(Object.fromEntries(Object.keys(input).map((key) => [key, type])));
    const plainObject = shape(fields.plain[name]);
    const oneStepObject = shape(fields[name] as z.ZodType);
    if (JSON.stringify(plainObject.parse(input)) !== JSON.stringify(oneStepObject.parse(input))) throw new Error(`${name}: the two forms differ`);
    const perField = (figure: Figure): Figure => ({ us: figure.us / 10, kb: figure.kb / 10 });
    const plainFigure = perField(await measure(() => plainObject.parse(input)));
    const oneStepFigure = perField(await measure(() => oneStepObject.parse(input)));
    rows.push([`${name}(${JSON.stringify(value)})`, plainFigure.us.toFixed(3), plainFigure.kb.toFixed(2), oneStepFigure.us.toFixed(3), oneStepFigure.kb.toFixed(2), ratio(plainFigure.us, oneStepFigure.us)]);
  }
  console.log(table(rows));
}

/**
 * A zone's offset at an instant, as the mappings read it for each time of a non-UTC clock (two per
 * time): through Intl every time, as before the hours were remembered; an hour read before; and an
 * hour never read, one hour later at every call (its first and last second formatted).
 */
async function zoneTable(): Promise<void> {
  const zone = 'Europe/Berlin';
  const at = Date.UTC(2016, 0, 8, 13, 6, 34);
  let unseen = Date.UTC(1990, 0, 1, 12, 0, 0);
  const intl = await measure(() => wallClockOffsetMs(at, zone));
  const seen = await measure(() => zoneOffsetMs(at, zone));
  const notSeen = await measure(() => zoneOffsetMs((unseen += HOUR_MS), zone));
  console.log(table([
    [`zone offset, ${zone} (per instant)`, 'µs', 'KB', 'Intl / this'],
    ['  Intl at each instant (before)', ...fmt(intl), ''],
    ['  an hour read before', ...fmt(seen), ratio(intl.us, seen.us)],
    ['  an hour never read', ...fmt(notSeen), ratio(intl.us, notSeen.us)],
  ]));
}

console.log(`Node ${process.version}, zod ${(await import('zod/package.json', { with: { type: 'json' } })).default.version}; µs: the fastest of ${ROUNDS} batches; KB: allocated per call\n`);
await answersTable();
console.log('');
await fieldsTable();
console.log('');
await zoneTable();
