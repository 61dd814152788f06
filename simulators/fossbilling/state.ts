/**
 * The simulator's data, stored as FOSSBilling's tables hold it, and the seed: two clients with
 * orders (services) and invoices, and a small catalog. Rows keep database types (DECIMAL as
 * strings); the API views in methods.ts render them as FOSSBilling's code does.
 */
export interface SimProduct {
  id: number;
  type: string;
  title: string;
  description: string;
  status: 'enabled' | 'disabled';
  hidden: boolean;
  /** The `setup` column: nullable, 'after_payment' by default (install/sql/structure.sql). */
  setup?: 'after_order' | 'after_payment' | null;
  payment: { type: 'free' | 'once' | 'recurrent'; once_price: string; once_setup_price: string; periods: Record<string, { price: string; setup: string; enabled: boolean }> };
}

export interface SimClient {
  id: number;
  email: string;
  first_name: string;
  last_name: string;
  company: string | null;
  currency: string | null;
  status: 'active' | 'suspended' | 'canceled';
  balance: number;
}

export interface SimOrder {
  id: number;
  client_id: number;
  product_id: number;
  title: string;
  currency: string;
  unpaid_invoice_id: number | null;
  service_type: string;
  period: string | null;
  quantity: number;
  price: string;
  status: string;
  config: string;
  meta: Record<string, string>;
  hosting: { ip: string; domain: string; username: string } | null;
  expires_at: string | null;
  activated_at: string | null;
  canceled_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface SimInvoice {
  id: number;
  client_id: number;
  serie: string;
  nr: string;
  currency: string;
  status: 'paid' | 'unpaid' | 'refunded' | 'canceled';
  approved: boolean;
  taxrate: string;
  credit: string;
  due_at: string | null;
  paid_at: string | null;
  created_at: string;
  buyer: { first_name: string; last_name: string; company: string | null; email: string };
  /**
   * `order_id`: the order a line is for (type `order`, its rel_id); none for a custom line. `task`:
   * what paying it does to the order; absent, `renew`, as on the invoices order/create issues.
   */
  lines: Array<{ title: string; price: string; quantity: number; taxed: boolean; order_id?: number; task?: 'activate' | 'renew' }>;
}

/** A row of client_order_status (Order\Service::saveStatusChange): the order's history. */
export interface SimStatusChange {
  order_id: number;
  status: string;
  notes: string;
  created_at: string;
}

export interface FossbillingState {
  products: SimProduct[];
  clients: SimClient[];
  orders: SimOrder[];
  invoices: SimInvoice[];
  nextOrderId: number;
  statusChanges: SimStatusChange[];
  /** The system's default currency: every product price is in it (USD when absent). */
  defaultCurrency?: string;
}

const monthlyAndYearly = (monthly: string, yearly: string) => ({
  '1M': { price: monthly, setup: '0.00', enabled: true },
  '3M': { price: (Number(monthly) * 3).toFixed(2), setup: '0.00', enabled: false },
  '1Y': { price: yearly, setup: '0.00', enabled: true },
  '1W': { price: '1.50', setup: '0.00', enabled: true },
});

/**
 * An invoice paid (Invoice\Service::markAsPaid): its status and time, and the orders that linked it
 * as unpaid lose the link (ServiceInvoiceItem::markAsPaid → unsetUnpaidInvoice). Then each order
 * line's task runs (ServiceInvoiceItem::executeTask, 0.6.22 to 0.8.5; 0.6.x runs it from the cron,
 * later versions at once when paid from credit).
 */
export function markInvoicePaid(state: FossbillingState, invoice: SimInvoice, at: string): void {
  if (invoice.status === 'paid') return;
  invoice.status = 'paid';
  invoice.paid_at = at;
  for (const order of state.orders) if (order.unpaid_invoice_id === invoice.id) order.unpaid_invoice_id = null;
  for (const line of invoice.lines) {
    const order = state.orders.find((candidate) => candidate.id === line.order_id);
    if (!order) continue;
    // TASK_ACTIVATE activates when the product is set up after payment, as every one here is.
    if (line.task === 'activate') runTask(state, order, at, 'Order could not be activated due to error', () => activateOrder(order, at));
    else runTask(state, order, at, 'Order could not renew due to error', () => renewOrder(state, order, at));
  }
}

/** executeTask catches the task's failure and records it in the order's history. */
function runTask(state: FossbillingState, order: SimOrder, at: string, what: string, task: () => void): void {
  try {
    task();
  } catch (error) {
    state.statusChanges.push({ order_id: order.id, status: order.status, notes: `${what}: ${(error as Error).message}.`, created_at: at });
  }
}

/**
 * Order\Service::activateOrder (and createFromOrder): the service is created (a hosting account on
 * its hostname). Only a pending_setup or failed_setup order, unless `force` (admin order/activate
 * passes its params, so staff can send force: true); an active one is left alone (0.8.4 and later).
 */
export function activateOrder(order: SimOrder, at: string, force = false): void {
  if (order.status === 'active' && !force) return;
  if (!['pending_setup', 'failed_setup'].includes(order.status) && !force) throw new Error('Only pending setup or failed orders can be activated');
  order.status = 'active';
  order.activated_at = at;
  order.updated_at = at;
  order.canceled_at = null;
  if (order.service_type !== 'hosting') return;
  const config = JSON.parse(order.config) as { sld?: unknown; tld?: unknown };
  const domain = typeof config.sld === 'string' && typeof config.tld === 'string' ? config.sld + config.tld : `order${order.id}.example.com`;
  order.hosting ??= { ip: '192.0.2.10', domain, username: `user${order.id}` };
}

/** Services whose action_renew needs the service (hosting, custom, domain); license and downloadable renew without one. */
const RENEW_NEEDS_SERVICE = new Set(['hosting', 'custom', 'domain']);
const MONTHS: Readonly<Record<string, number>> = { '1M': 1, '3M': 3, '6M': 6, '1Y': 12, '2Y': 24, '3Y': 36 };

/**
 * TASK_RENEW: a suspended order is unsuspended, then Order\Service::renewFromOrder calls the
 * service's renew. An order never activated has no service: that throws, and the order becomes
 * failed_renew with the error in its history (FOSSBilling#2693). Otherwise its expiry moves one
 * period on from itself (order_renewal_logic's default; 0.7.x skips that for the order's first paid invoice).
 */
function renewOrder(state: FossbillingState, order: SimOrder, at: string): void {
  if (order.activated_at === null && RENEW_NEEDS_SERVICE.has(order.service_type)) {
    order.status = 'failed_renew';
    order.updated_at = at;
    const message = `Order ${order.id} has no active service`;
    state.statusChanges.push({ order_id: order.id, status: order.status, notes: message, created_at: at });
    throw new Error(message);
  }
  if (order.period !== null) {
    const from = new Date(`${order.expires_at ?? at}Z`.replace(' ', 'T'));
    if (order.period === '1W') from.setUTCDate(from.getUTCDate() + 7);
    else from.setUTCMonth(from.getUTCMonth() + (MONTHS[order.period] ?? 0));
    order.expires_at = from.toISOString().slice(0, 19).replace('T', ' ');
  }
  order.status = 'active';
  order.canceled_at = null;
  order.updated_at = at;
  state.statusChanges.push({ order_id: order.id, status: order.status, notes: 'Order renewed', created_at: at });
}

export function createFossbillingSeed(): FossbillingState {
  const order = (id: number, clientId: number, status: string, extra: Partial<SimOrder> = {}): SimOrder => ({
    id,
    client_id: clientId,
    product_id: 1,
    title: 'Shared Hosting Starter',
    currency: clientId === 2 ? 'EUR' : 'USD',
    unpaid_invoice_id: null,
    service_type: 'hosting',
    period: '1M',
    quantity: 1,
    price: '4.99',
    status,
    config: JSON.stringify({ hostname: `site${id}.example.com` }),
    meta: {},
    hosting: status === 'pending_setup' ? null : { ip: '192.0.2.10', domain: `site${id}.example.com`, username: `user${id}` },
    expires_at: '2026-12-01 00:00:00',
    activated_at: status === 'pending_setup' ? null : '2026-01-01 10:00:00',
    canceled_at: status === 'canceled' ? '2026-06-01 09:30:00' : null,
    created_at: '2026-01-01 09:59:12',
    updated_at: '2026-01-01 10:00:00',
    ...extra,
  });
  const buyer = (clientId: number) =>
    clientId === 1
      ? { first_name: 'Ada', last_name: 'Lovelace', company: 'Analytical Ltd', email: 'ada@example.com' }
      : { first_name: 'Bob', last_name: 'Other', company: null, email: 'bob@example.org' };
  return {
    products: [
      { id: 1, type: 'hosting', title: 'Shared Hosting Starter', description: 'Small sites', status: 'enabled', hidden: false, payment: { type: 'recurrent', once_price: '0.00', once_setup_price: '0.00', periods: monthlyAndYearly('4.99', '49.90') } },
      { id: 2, type: 'custom', title: 'Setup Service', description: 'One-off setup', status: 'enabled', hidden: false, payment: { type: 'once', once_price: '25.00', once_setup_price: '5.00', periods: {} } },
      { id: 3, type: 'custom', title: 'Internal Plan', description: 'Hidden', status: 'enabled', hidden: true, payment: { type: 'recurrent', once_price: '0.00', once_setup_price: '0.00', periods: monthlyAndYearly('1.00', '10.00') } },
      { id: 4, type: 'custom', title: 'Trial', description: 'Free', status: 'enabled', hidden: false, payment: { type: 'free', once_price: '0.00', once_setup_price: '0.00', periods: {} } },
    ],
    clients: [
      { id: 1, email: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace', company: 'Analytical Ltd', currency: 'USD', status: 'active', balance: 12.5 },
      { id: 2, email: 'bob@example.org', first_name: 'Bob', last_name: 'Other', company: null, currency: 'EUR', status: 'active', balance: 0 },
    ],
    orders: [order(1, 1, 'active'), order(2, 1, 'suspended'), order(3, 1, 'canceled'), order(4, 1, 'pending_setup', { unpaid_invoice_id: 2 }), order(5, 2, 'active')],
    invoices: [
      { id: 1, client_id: 1, serie: 'FOSS', nr: '1', currency: 'USD', status: 'paid', approved: true, taxrate: '20', credit: '0.00', due_at: '2026-01-08 00:00:00', paid_at: '2026-01-02 11:00:00', created_at: '2026-01-01 10:00:00', buyer: buyer(1), lines: [{ title: 'Shared Hosting Starter (1M)', price: '4.99', quantity: 1, taxed: true, order_id: 1 }] },
      { id: 2, client_id: 1, serie: 'FOSS', nr: '2', currency: 'USD', status: 'unpaid', approved: true, taxrate: '0', credit: '0.00', due_at: '2026-02-08 00:00:00', paid_at: null, created_at: '2026-02-01 10:00:00', buyer: buyer(1), lines: [{ title: 'Shared Hosting Starter (1M)', price: '4.99', quantity: 1, taxed: false, order_id: 4 }] },
      { id: 3, client_id: 2, serie: 'FOSS', nr: '3', currency: 'EUR', status: 'unpaid', approved: true, taxrate: '0', credit: '0.00', due_at: '2026-02-08 00:00:00', paid_at: null, created_at: '2026-02-01 10:00:00', buyer: buyer(2), lines: [{ title: 'Shared Hosting Starter (1M)', price: '4.99', quantity: 1, taxed: false }] },
    ],
    nextOrderId: 6,
    statusChanges: [],
  };
}
