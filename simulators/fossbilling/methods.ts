/**
 * The admin API methods the simulator answers, with the shapes FOSSBilling's code gives them:
 * `toApiArray()` views keep PHP types (ints, DECIMAL strings, float totals), `get_list` rows of
 * order come straight from SQL (every column a string), lists are `{pages, page, per_page, total,
 * list}`. Errors are thrown as SimError and rendered as FOSSBilling's error envelope.
 */
import { activateOrder, type FossbillingState, markInvoicePaid, type SimInvoice, type SimOrder, type SimProduct } from './state.js';

export class SimError extends Error {
  constructor(
    message: string,
    readonly code = 0,
  ) {
    super(message);
  }
}

type Params = Record<string, unknown>;
type Handler = (state: FossbillingState, params: Params) => unknown;

const PERIOD_TITLES: Record<string, string> = { '1W': 'Every Week', '1M': 'Every Month', '3M': 'Every 3 Months', '1Y': 'Every Year' };
const now = (): string => new Date().toISOString().slice(0, 19).replace('T', ' ');
const truthy = (value: unknown): boolean => value === true || value === 1 || value === '1' || value === 'true';

function paginate<T>(rows: T[], params: Params): { pages: number; page: number; per_page: number; total: number; list: T[] } {
  const page = Number(params.page ?? 1);
  const perPage = Number(params.per_page ?? 100);
  if (!Number.isInteger(page) || page < 1 || !Number.isInteger(perPage) || perPage < 1 || perPage > 500) {
    throw new SimError('Invalid pagination parameters');
  }
  const total = rows.length;
  return { pages: total > 0 ? Math.ceil(total / perPage) : 0, page, per_page: perPage, total, list: rows.slice((page - 1) * perPage, page * perPage) };
}

function productView(product: SimProduct) {
  const { payment } = product;
  const periods = Object.fromEntries(
    Object.entries(payment.periods).map(([code, entry]) => [code, { ...entry, title: PERIOD_TITLES[code] ?? code }]),
  );
  return {
    id: product.id,
    product_category_id: 1,
    type: product.type,
    title: product.title,
    slug: product.title.toLowerCase().replace(/\s+/g, '-'),
    description: product.description,
    unit: 'product',
    priority: 1,
    // An empty PHP array is encoded as [].
    pricing: { type: payment.type, free: { price: 0, setup: 0 }, once: { price: payment.once_price, setup: payment.once_setup_price }, recurrent: Object.keys(periods).length > 0 ? periods : [] },
    config: {},
    addons: [],
    price_starting_from: payment.type === 'once' ? payment.once_price : 0,
    icon_url: null,
    allow_quantity_select: false,
    form_id: null,
    created_at: '2025-12-01 08:00:00',
    updated_at: '2025-12-01 08:00:00',
    suspension_grace_days: null,
    quantity_in_stock: 0,
    stock_control: false,
    upgrades: [],
    status: product.status,
    hidden: product.hidden,
    setup: product.setup === undefined ? 'after_payment' : product.setup,
  };
}

function clientOf(state: FossbillingState, id: unknown) {
  const client = state.clients.find((candidate) => candidate.id === Number(id));
  if (!client) throw new SimError('Client not found');
  return client;
}

function clientView(state: FossbillingState, id: unknown, deep: boolean) {
  const client = clientOf(state, id);
  const { balance, ...details } = client;
  return { ...details, email_approved: true, type: 'individual', group_id: null, role: 'client', notes: null, created_at: '2025-12-01 08:00:00', ...(deep ? { balance } : {}) };
}

const orderTotal = (order: SimOrder): number => Number(order.price) * order.quantity;

/** `Order\Service::toApiArray()`: typed values. */
function orderView(state: FossbillingState, order: SimOrder) {
  const { hosting, meta, config, ...row } = order;
  void hosting;
  return { ...row, group_master: true, invoice_option: 'issue-invoice', config: JSON.parse(config) as unknown, total: orderTotal(order), meta, client: clientView(state, order.client_id, false), active_tickets: 0 };
}

/** `getBatchForApi()` over SQL rows: every column a string (null stays null). */
function orderRowView(state: FossbillingState, order: SimOrder) {
  const { hosting, meta, config, ...row } = order;
  void hosting;
  const strings = Object.fromEntries(Object.entries(row).map(([key, value]) => [key, value === null ? null : String(value)]));
  return { ...strings, group_master: '1', invoice_option: 'issue-invoice', config: JSON.parse(config) as unknown, total: orderTotal(order), meta, client: clientView(state, order.client_id, false), active_tickets: 0 };
}

function orderOf(state: FossbillingState, params: Params): SimOrder {
  if (params.id === undefined) throw new SimError('Order ID was not passed');
  const order = state.orders.find((candidate) => candidate.id === Number(params.id));
  if (!order) throw new SimError('Order Not Found');
  return order;
}

function invoiceView(state: FossbillingState, invoice: SimInvoice) {
  const lines = invoice.lines.map((line, index) => ({ id: index + 1, title: line.title, period: '1M', quantity: line.quantity, unit: 'product', price: line.price, tax: 0, taxed: line.taxed ? 1 : 0, charged: 0, total: Number(line.price) * line.quantity, order_id: line.order_id ?? null, type: line.order_id === undefined ? 'custom' : 'order', rel_id: line.order_id ?? null, task: line.order_id === undefined ? null : (line.task ?? 'renew'), status: 'pending_approval' }));
  const subtotal = lines.reduce((sum, line) => sum + line.total, 0);
  const taxable = lines.filter((line) => line.taxed).reduce((sum, line) => sum + line.total, 0);
  const tax = Number(invoice.taxrate) > 0 && taxable !== 0 ? Math.round(taxable * Number(invoice.taxrate)) / 100 : 0;
  return {
    id: invoice.id,
    serie: invoice.serie,
    nr: invoice.nr,
    client_id: invoice.client_id,
    serie_nr: `${invoice.serie}${invoice.nr.padStart(5, '0')}`,
    hash: 'a'.repeat(40),
    hash_expires_at: null,
    gateway_id: null,
    taxname: 'VAT',
    taxrate: invoice.taxrate,
    currency: invoice.currency,
    currency_rate: '1.000000',
    tax,
    subtotal,
    total: subtotal + tax,
    status: invoice.status,
    notes: 'internal note',
    due_at: invoice.due_at,
    paid_at: invoice.paid_at,
    created_at: invoice.created_at,
    updated_at: invoice.created_at,
    lines,
    buyer: { ...invoice.buyer, company_vat: null, company_number: null, address: '1 Main St', city: 'London', state: null, country: 'GB', phone: null, phone_cc: '', zip: 'N1' },
    seller: { company: 'Host Co', email: 'billing@host.example' },
    client: clientView(state, invoice.client_id, false),
    approved: invoice.approved,
    income: 0,
    refund: 0,
    credit: invoice.credit,
    subscribable: false,
  };
}

function setStatus(order: SimOrder, status: string, field?: 'canceled_at'): true {
  order.status = status;
  order.updated_at = now();
  if (field) order[field] = now();
  return true;
}

/**
 * Servicehosting\Service::_getDomainTuple and validateOrderData: a hosting order names its domain
 * (only `owndomain` here), kept as `sld` and `tld` (the account is `sld . tld`).
 */
function hostingDomain(config: Record<string, unknown>): { sld: string; tld: string } {
  const domain = config.domain as Record<string, unknown> | undefined;
  if (typeof domain !== 'object' || domain === null) throw new SimError('Hosting product must have domain configuration');
  if (!domain.action) throw new SimError('Domain action is missing');
  const sld = domain.action === 'owndomain' ? String(domain.owndomain_sld ?? '') : '';
  const tld = domain.action === 'owndomain' ? String(domain.owndomain_tld ?? '') : '';
  if (sld === '') throw new SimError('Domain name is invalid.', 703);
  if (tld === '') throw new SimError('Domain extension is invalid.', 704);
  return { sld, tld: tld.includes('.') ? tld : `.${tld}` };
}

function createOrder(state: FossbillingState, params: Params): number {
  if (params.client_id === undefined) throw new SimError('Client ID was not passed');
  if (params.product_id === undefined) throw new SimError('Product ID was not passed');
  const client = clientOf(state, params.client_id);
  const product = state.products.find((candidate) => candidate.id === Number(params.product_id));
  if (!product) throw new SimError('Product not found');
  const period = typeof params.period === 'string' && params.period !== '' ? params.period : null;
  let price = product.payment.type === 'once' ? product.payment.once_price : '0.00';
  if (product.payment.type === 'recurrent') {
    const entry = period === null ? undefined : product.payment.periods[period];
    if (!entry?.enabled) throw new SimError('Selected billing period is invalid');
    price = entry.price;
  }
  const given: Record<string, unknown> = typeof params.config === 'object' && params.config !== null && !Array.isArray(params.config) ? (params.config as Record<string, unknown>) : {};
  const config = product.type === 'hosting' ? { ...given, ...hostingDomain(given) } : given;
  const meta = typeof params.meta === 'object' && params.meta !== null ? Object.fromEntries(Object.entries(params.meta).map(([key, value]) => [key, String(value)])) : {};
  const id = state.nextOrderId++;
  const stamp = now();
  const order: SimOrder = {
    id,
    client_id: client.id,
    product_id: product.id,
    title: product.title,
    currency: client.currency ?? 'USD',
    unpaid_invoice_id: null,
    service_type: product.type,
    period,
    quantity: 1,
    price,
    status: 'pending_setup',
    config: JSON.stringify({ ...config, ...(period ? { period } : {}) }),
    meta,
    hosting: null,
    expires_at: null,
    activated_at: null,
    canceled_at: null,
    created_at: stamp,
    updated_at: stamp,
  };
  state.orders.push(order);
  // Whatever the price since 0.8.4 (generateForOrder refuses only a negative amount; 0.6.22 to 0.8.3
  // issue none for a free order).
  if (params.invoice_option === 'issue-invoice' && Number(price) >= 0) issueInvoice(state, order, stamp);
  // `activate` runs last, on the order as its invoice's payment left it (0.8.x reads it again): a
  // renew task that failed it (failed_renew) makes activateOrder throw, which createOrder only logs.
  if (truthy(params.activate) && ['pending_setup', 'failed_setup'].includes(order.status)) activateOrder(order, stamp);
  return id;
}

/**
 * `issue-invoice`: Order\Service::createOrder() generates the order's invoice (Invoice\Service::
 * generateForOrder: one line of type order for it), approves it and links it as the order's unpaid one.
 */
function issueInvoice(state: FossbillingState, order: SimOrder, stamp: string): void {
  const client = clientOf(state, order.client_id);
  const id = Math.max(0, ...state.invoices.map((invoice) => invoice.id)) + 1;
  const invoice: SimInvoice = {
    id,
    client_id: client.id,
    serie: 'FOSS',
    nr: String(id),
    currency: order.currency,
    status: 'unpaid',
    approved: true,
    taxrate: '0',
    credit: '0.00',
    due_at: stamp,
    paid_at: null,
    created_at: stamp,
    buyer: { first_name: client.first_name, last_name: client.last_name, company: client.company, email: client.email },
    lines: [{ title: `${order.title}${order.period ? ` (${order.period})` : ''}`, price: order.price, quantity: 1, taxed: false, order_id: order.id }],
  };
  state.invoices.push(invoice);
  order.unpaid_invoice_id = id;
  // approveInvoice(…, use_credits: true) → tryPayWithCredits: paid from the client's balance when it
  // covers the total (a 0.00 invoice always), and markAsPaid clears the order's link.
  const total = Number(order.price);
  if (client.balance - total >= -0.01) {
    client.balance = Math.round((client.balance - total) * 100) / 100;
    markInvoicePaid(state, invoice, stamp);
  }
}

export const METHODS: Readonly<Record<string, Handler>> = {
  'product/get_types': () => ({ custom: 'Custom', license: 'License', downloadable: 'Downloadable', hosting: 'Hosting', domain: 'Domain' }),
  // 0.8's Currency::toApiArray (0.6 and 0.7 name it `title`, with `format`): the code is in both.
  'currency/get_default': (state) => {
    const code = state.defaultCurrency ?? 'USD';
    return { code, name: code, symbol: code, conversion_rate: 1, default: true };
  },
  'product/get_list': (state, params) => paginate(state.products.map(productView), params),
  'product/get': (state, params) => {
    const product = state.products.find((candidate) => candidate.id === Number(params.id));
    if (!product) throw new SimError('Product not found');
    return productView(product);
  },
  'client/get': (state, params) => {
    if (params.id === undefined && params.email === undefined) throw new SimError('Client ID or email is required');
    return clientView(state, params.id, true);
  },
  'order/get': (state, params) => orderView(state, orderOf(state, params)),
  'order/get_list': (state, params) => {
    const meta = typeof params.meta === 'object' && params.meta !== null ? Object.entries(params.meta as Params) : [];
    const orders = state.orders
      .filter((order) => !params.client_id || order.client_id === Number(params.client_id))
      .filter((order) => !params.status || order.status === params.status)
      // `meta.value LIKE :value%`: a prefix match, as in Order\Service::getSearchQuery().
      .filter((order) => meta.every(([name, value]) => order.meta[name]?.startsWith(String(value)) ?? false))
      .sort((left, right) => right.id - left.id);
    // The query LEFT JOINs client_order_meta without GROUP BY: unfiltered, an order with several
    // meta rows is one SQL row per meta row. The total counts them all; getBatchForApi() then
    // drops the duplicate ids within the page.
    const rows = orders.flatMap((order) => Array.from({ length: meta.length > 0 ? 1 : Math.max(1, Object.keys(order.meta).length) }, () => order));
    const result = paginate(rows, params);
    const unique = [...new Set(result.list)];
    return { ...result, list: unique.map((order) => orderRowView(state, order)) };
  },
  'order/service': (state, params) => {
    const order = orderOf(state, params);
    if (!order.hosting) return null;
    return { ...order.hosting, sld: order.hosting.domain.split('.')[0], tld: '.com', reseller: false, server: { name: 'web1', hostname: 'web1.host.example', ip: '192.0.2.10', ns1: null, ns2: null, ns3: null, ns4: null, cpanel_url: null, reseller_cpanel_url: null }, hosting_plan: { name: 'Starter' }, domain_order_id: null };
  },
  'order/create': createOrder,
  'order/suspend': (state, params) => {
    const order = orderOf(state, params);
    if (order.status !== 'active') throw new SimError('Only active orders can be suspended');
    return setStatus(order, 'suspended');
  },
  'order/unsuspend': (state, params) => {
    const order = orderOf(state, params);
    if (order.status !== 'suspended') throw new SimError('Only suspended orders can be unsuspended');
    return setStatus(order, 'active');
  },
  'order/cancel': (state, params) => {
    const order = orderOf(state, params);
    if (['canceled', 'pending_setup', 'failed_setup'].includes(order.status)) throw new SimError(`Cannot cancel ${order.status} order`);
    return setStatus(order, 'canceled', 'canceled_at');
  },
  'order/uncancel': (state, params) => {
    const order = orderOf(state, params);
    if (order.status !== 'canceled') throw new SimError('Only canceled orders can be uncanceled');
    order.canceled_at = null;
    return setStatus(order, 'active');
  },
  // Filters as Invoice\Repository\InvoiceRepository::getSearchQueryBuilder(): `order_id` keeps the
  // invoices with a line of type order for it; newest first.
  'invoice/get_list': (state, params) =>
    paginate(
      state.invoices
        .filter((invoice) => !params.client_id || invoice.client_id === Number(params.client_id))
        .filter((invoice) => !params.order_id || invoice.lines.some((line) => line.order_id === Number(params.order_id)))
        .sort((left, right) => right.id - left.id)
        .map((invoice) => invoiceView(state, invoice)),
      params,
    ),
  'invoice/get': (state, params) => {
    const invoice = state.invoices.find((candidate) => candidate.id === Number(params.id));
    if (!invoice) throw new SimError('Invoice was not found');
    return invoiceView(state, invoice);
  },
};
