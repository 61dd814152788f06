/**
 * Tolerant parsing, proven over every recorded answer: each field in turn is removed, set to null,
 * or retyped (number ↔ string), and every request that reads that answer runs through the real
 * mapping (MockAgent). A request must give the same v1 result, or the result of the default
 * documented below, or fail with a 502 whose operator message names the action and the field.
 * Never a crash (500), never any other difference. Retyping must never change anything.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { isDeepStrictEqual } from 'node:util';
import { BackendError, type Backend } from '../../../src/backend/backend.js';
import { type Path, type Variant, type VariantKind, changedAt, fieldName, matches, valueAt, variantsOf } from './answer-variants.js';
import { CUSTOMER, FakeWhmcs, assertNoSecrets } from './fake-whmcs.js';
import * as answers from './fixtures/answers.js';
import * as variants from './fixtures/variants.js';

// ---- the requests -----------------------------------------------------------------------------

const CTX = { requestId: 'req-variants', beforeWrite: async () => undefined };
const REQUESTS = {
  account: (backend: Backend) => backend.getAccount(CUSTOMER, CTX),
  balance: (backend: Backend) => backend.getBalance(CUSTOMER, CTX),
  products: (backend: Backend) => backend.listProducts(CTX),
  product: (backend: Backend) => backend.getProduct('2', CTX),
  order: (backend: Backend) => backend.getOrder(CUSTOMER, '1', CTX),
  place: (backend: Backend) =>
    backend.placeOrder(CUSTOMER, { product_id: '2', billing_cycle: 'annually', config_options: { '4': '12', '8': 3 } }, { ...CTX, idempotencyKey: 'k-1', idempotencyRecord: 'r-1' }),
  services: (backend: Backend) => backend.listServices(CUSTOMER, { page: 1, perPage: 25 }, CTX),
  service: (backend: Backend) => backend.getService(CUSTOMER, '1', CTX),
  credentials: (backend: Backend) => backend.getCredentials(CUSTOMER, '1', CTX),
  start: (backend: Backend) => backend.runServiceAction(CUSTOMER, '1', 'start', CTX),
  invoices: (backend: Backend) => backend.listInvoices(CUSTOMER, { page: 1, perPage: 25 }, CTX),
  invoice: (backend: Backend) => backend.getInvoiceDocument(CUSTOMER, '1', CTX),
} satisfies Record<string, (backend: Backend) => Promise<unknown>>;
type RequestName = keyof typeof REQUESTS;

/** What each request reads: varying an action's answer concerns these requests only. */
const READERS: Record<string, RequestName[]> = {
  GetClientsDetails: ['account', 'balance', 'services', 'order', 'place', 'invoices', 'invoice'],
  GetProducts: ['products', 'product', 'place', 'start'],
  GetClientsProducts: ['services', 'service', 'credentials', 'start'],
  GetCancelledPackages: ['services', 'service', 'start'],
  GetOrders: ['order', 'place'],
  GetInvoices: ['invoices'],
  GetInvoice: ['invoice'],
  AddOrder: ['place'],
};

const UNVARIED: Record<string, unknown> = {
  GetClientsDetails: answers.clientDetails,
  GetProducts: answers.catalog,
  GetClientsProducts: answers.clientsProducts([answers.service]),
  GetCancelledPackages: answers.cancelledPackages,
  GetOrders: answers.orders,
  GetInvoices: answers.invoices,
  GetInvoice: { ...answers.invoice, userid: 1 },
  AddOrder: answers.addOrder,
  ModuleCustom: answers.moduleSuccess,
};

/** Every recorded answer, from the facts file and from the documentation (fixtures/variants.ts). */
const RECORDED: Array<[action: string, label: string, answer: unknown]> = [
  ['GetClientsDetails', 'recorded', answers.clientDetails],
  ['GetClientsDetails', 'top level only', variants.clientDetailsTopLevelOnly],
  ['GetProducts', 'recorded catalog', answers.catalog],
  ['GetProducts', 'empty', answers.productsEmpty],
  ['GetOrders', 'recorded', answers.orders],
  ['GetOrders', 'as documented', variants.ordersAsDocumented],
  ['GetOrders', 'empty', answers.ordersEmpty],
  ['GetClientsProducts', 'recorded', answers.clientsProducts([answers.service])],
  ['GetClientsProducts', 'numbers as numbers', variants.clientsProductsAsNumbers],
  ['GetClientsProducts', 'empty', answers.clientsProductsEmpty],
  ['GetCancelledPackages', 'recorded', answers.cancelledPackages],
  ['GetCancelledPackages', 'empty', answers.cancelledPackagesEmpty],
  ['GetInvoices', 'recorded', answers.invoices],
  ['GetInvoices', 'without tax2 and rates', variants.invoicesWithoutSecondTax],
  ['GetInvoices', 'older, numbers as numbers', variants.invoicesOlderAsNumbers],
  ['GetInvoices', 'empty', answers.invoicesEmpty],
  ['GetInvoice', 'recorded', { ...answers.invoice, userid: 1 }],
  ['GetInvoice', 'without tax2 and rates', variants.invoiceWithoutSecondTax],
  ['GetInvoice', 'numbers as numbers', variants.invoiceAsNumbers],
  ['AddOrder', 'recorded', answers.addOrder],
];

// ---- the documented defaults ------------------------------------------------------------------

/** Turns the unvaried answer into the one a documented default says the variant equals. */
type Equivalent = (parent: Record<string, unknown>, key: string, answer: unknown, path: Path) => void;
const to =
  (value: unknown): Equivalent =>
  (parent, key) => {
    parent[key] = value;
  };

const CYCLES = ['monthly', 'quarterly', 'semiannually', 'annually', 'biennially', 'triennially'];
const notOffered = to(Object.fromEntries(CYCLES.map((cycle) => [cycle, '-1.00'])));
/** A free product is offered (at 0.00) in the currencies its pricing names; others have no price there. */
const currencyAbsent: Equivalent = (parent, key, answer, path) => {
  const product = valueAt(answer, path.slice(0, 3)) as { paytype?: unknown };
  if (path.length === 5 && product.paytype === 'free') delete parent[key];
  else notOffered(parent, key, answer, path);
};
/** A quantity option with a bound unstated is one with neither stated (WHMCS 8.7 lists none). */
const boundsUnstated: Equivalent = (parent) => {
  delete parent.minqty;
  delete parent.maxqty;
};
const feeAbsent: Equivalent = (parent, key) => {
  parent[CYCLES.find((cycle) => cycle.startsWith(key.charAt(0))) as string] = '-1.00';
};
/** A choice's cycle (or currency) without a price or fee is not quoted there: "-1.00" is a real price for a choice. */
const choiceCycleAbsent: Equivalent = (parent, key) => {
  const cycle = CYCLES.find((candidate) => candidate.startsWith(key.charAt(0))) as string;
  delete parent[cycle];
  delete parent[`${cycle.charAt(0)}setupfee`];
};
const absent: Equivalent = (parent, key) => {
  delete parent[key];
};

interface DocumentedDefault {
  action: string;
  patterns: string[];
  kinds: VariantKind[];
  as: Equivalent;
}

const PRODUCT = 'products.product.*';
const PRICINGS = [`${PRODUCT}.pricing`, `${PRODUCT}.configoptions.configoption.*.options.option.*.pricing`];
const [PRODUCT_PRICING, CHOICE_PRICING] = PRICINGS as [string, string];
const SERVICE = 'products.product.*';
const ROW = 'invoices.invoice.*';
const NONE = ['null'] as VariantKind[];
const ABSENT_OR_NONE = ['missing', 'null'] as VariantKind[];

/** The same list as the comment at the top of mappings/whmcs/parse.ts, written out independently. */
const DOCUMENTED: DocumentedDefault[] = [
  // null is WHMCS's own "none" where the field has one ("", 0, "0000-00-00").
  { action: 'GetClientsDetails', patterns: ['client.firstname', 'client.lastname', 'client.companyname', 'firstname', 'lastname', 'companyname'], kinds: NONE, as: to('') },
  { action: 'GetProducts', patterns: [`${PRODUCT}.description`, `${PRODUCT}.module`], kinds: NONE, as: to('') },
  { action: 'GetProducts', patterns: [`${PRODUCT}.customfields`], kinds: ABSENT_OR_NONE, as: to('') },
  { action: 'GetProducts', patterns: [`${PRODUCT}.configoptions`, `${PRODUCT}.configoptions.configoption.*.options`], kinds: NONE, as: to('') },
  { action: 'GetProducts', patterns: [`${PRODUCT}.customfields.customfield.*.name`], kinds: ABSENT_OR_NONE, as: to('') },
  { action: 'GetProducts', patterns: PRICINGS, kinds: ['missing'], as: to({}) },
  { action: 'GetProducts', patterns: ['minqty', 'maxqty'].map((bound) => `${PRODUCT}.configoptions.configoption.*.${bound}`), kinds: ABSENT_OR_NONE, as: boundsUnstated },
  { action: 'GetProducts', patterns: [`${PRODUCT_PRICING}.*`], kinds: ['missing'], as: currencyAbsent },
  { action: 'GetProducts', patterns: CYCLES.map((cycle) => `${PRODUCT_PRICING}.*.${cycle}`), kinds: ['missing'], as: to('-1.00') },
  { action: 'GetProducts', patterns: CYCLES.map((cycle) => `${PRODUCT_PRICING}.*.${cycle.charAt(0)}setupfee`), kinds: ['missing'], as: feeAbsent },
  { action: 'GetProducts', patterns: [`${CHOICE_PRICING}.*`], kinds: ['missing'], as: absent },
  { action: 'GetProducts', patterns: CYCLES.flatMap((cycle) => [`${CHOICE_PRICING}.*.${cycle}`, `${CHOICE_PRICING}.*.${cycle.charAt(0)}setupfee`]), kinds: ['missing'], as: choiceCycleAbsent },
  { action: 'GetOrders', patterns: ['orders.order.*.invoiceid', 'orders.order.*.lineitems.lineitem.*.relid'], kinds: NONE, as: to(0) },
  { action: 'GetOrders', patterns: ['orders.order.*.paymentstatus', 'orders.order.*.lineitems'], kinds: NONE, as: to('') },
  { action: 'GetClientsProducts', patterns: [`${SERVICE}.orderid`], kinds: NONE, as: to('0') },
  { action: 'GetClientsProducts', patterns: [`${SERVICE}.regdate`, `${SERVICE}.nextduedate`], kinds: NONE, as: to('0000-00-00') },
  {
    action: 'GetClientsProducts',
    patterns: ['domain', 'dedicatedip', 'assignedips', 'username', 'password', 'configoptions', 'configoptions.configoption.*.option', 'configoptions.configoption.*.value'].map(
      (field) => `${SERVICE}.${field}`,
    ),
    kinds: NONE,
    as: to(''),
  },
  { action: 'GetInvoices', patterns: [`${ROW}.tax`, `${ROW}.tax2`], kinds: ABSENT_OR_NONE, as: to('0.00') },
  { action: 'GetInvoices', patterns: [`${ROW}.invoicenum`], kinds: NONE, as: to('') },
  { action: 'GetInvoices', patterns: [`${ROW}.date`, `${ROW}.duedate`, `${ROW}.datepaid`], kinds: NONE, as: to('0000-00-00') },
  { action: 'GetInvoice', patterns: ['tax', 'tax2'], kinds: ABSENT_OR_NONE, as: to('0.00') },
  { action: 'GetInvoice', patterns: ['taxrate', 'taxrate2'], kinds: ABSENT_OR_NONE, as: to('') },
  { action: 'GetInvoice', patterns: ['invoicenum', 'items.item.*.description'], kinds: NONE, as: to('') },
  { action: 'GetInvoice', patterns: ['date', 'duedate', 'datepaid'], kinds: NONE, as: to('0000-00-00') },
  { action: 'GetInvoice', patterns: ['items.item.*.taxed'], kinds: NONE, as: to(0) },
];

function documentedDefault(action: string, variant: Variant): Equivalent | undefined {
  return DOCUMENTED.find(
    (entry) => entry.action === action && entry.kinds.includes(variant.kind) && entry.patterns.some((pattern) => matches(pattern, variant.path)),
  )?.as;
}

// ---- running and judging ----------------------------------------------------------------------

type Outcome = { ok: unknown } | { failed: BackendError['kind']; detail: string; operatorMessage: string } | { crashed: string };

async function outcomeOf(work: Promise<unknown>): Promise<Outcome> {
  try {
    return { ok: await work };
  } catch (error) {
    if (!(error instanceof BackendError)) return { crashed: String(error) };
    assertNoSecrets(error);
    return { failed: error.kind, detail: error.detail, operatorMessage: error.operatorMessage ?? '' };
  }
}

/** Runs the requests that read `action`, WHMCS answering it with `answer` and the rest unvaried. */
async function run(action: string, answer: unknown): Promise<Map<RequestName, Outcome>> {
  const whmcs = new FakeWhmcs();
  for (const [name, unvaried] of Object.entries(UNVARIED)) whmcs.answer(name, name === action ? (answer as object) : (unvaried as object));
  const backend = whmcs.backend({ circuitBreaker: { enabled: false } });
  const outcomes = new Map<RequestName, Outcome>();
  try {
    for (const name of READERS[action] ?? []) outcomes.set(name, await outcomeOf(REQUESTS[name](backend)));
  } finally {
    await backend.close();
    await whmcs.close();
  }
  return outcomes;
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A 502 whose operator message names the action and the field (array positions aside). */
function namesField(outcome: Outcome, action: string, path: Path): boolean {
  if (!('failed' in outcome) || outcome.failed !== 'upstream_error') return false;
  const message = outcome.operatorMessage.replace(/\.\d+(?=[.:\s]|$)/g, '').replace(/\[\]/g, '');
  const field = new RegExp(`(^|[\\s:(\`'"])${escape(fieldName(path))}([\\s:.)\`'",;]|$)`);
  return message.includes(`WHMCS ${action}`) && field.test(message);
}

const show = (outcome: Outcome | undefined): string => JSON.stringify(outcome)?.slice(0, 300) ?? 'nothing';

async function problemsWith(action: string, answer: unknown): Promise<string[]> {
  const baseline = await run(action, answer);
  const problems: string[] = [];
  for (const [name, outcome] of baseline) if (!('ok' in outcome) && !('failed' in outcome)) problems.push(`unvaried: ${name} crashed`);
  for (const variant of variantsOf(answer)) {
    const actual = await run(action, variant.answer);
    const equivalent = documentedDefault(action, variant);
    const equivalentAnswer = equivalent && changedAt(answer, variant.path, (parent, key) => equivalent(parent, key, answer, variant.path));
    const expected = equivalentAnswer ? await run(action, equivalentAnswer) : baseline;
    for (const [name, outcome] of actual) {
      if (isDeepStrictEqual(outcome, expected.get(name))) continue;
      if (!equivalent && variant.kind !== 'retyped' && namesField(outcome, action, variant.path)) continue;
      problems.push(`${variant.kind} ${variant.path.join('.')}: ${name} gave ${show(outcome)}, expected ${show(expected.get(name))}`);
    }
  }
  return problems;
}

t.test('WHMCS answers: every field absent, null or retyped', async (t) => {
  for (const [action, label, answer] of RECORDED) {
    t.test(`${action} (${label})`, async () => {
      assert.deepEqual(await problemsWith(action, answer), []);
    });
  }
});
