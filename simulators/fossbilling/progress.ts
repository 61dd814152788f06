/**
 * Opt-in life of its own for the sandbox, as on the WHMCS simulator: staff activate new orders and
 * customers pay new invoices, so webhook events flow. Only rows created after the simulator started
 * move, so seed data stays as the fixtures describe it.
 */
import { type ProgressOptions, startProgressLoop } from '../shared/progress.js';
import { activateOrder, type FossbillingState, markInvoicePaid } from './state.js';

export type { ProgressOptions } from '../shared/progress.js';

/** FOSSBilling's own timestamp format (MySQL DATETIME, UTC here). */
const sqlNow = (): string => new Date().toISOString().slice(0, 19).replace('T', ' ');

export function startProgress(state: FossbillingState, options: ProgressOptions): () => void {
  const seedOrders = new Set(state.orders.map((order) => order.id));
  const seedInvoices = new Set(state.invoices.map((invoice) => invoice.id));
  return startProgressLoop(options, (due) => {
    for (const order of state.orders) {
      if (seedOrders.has(order.id) || order.status !== 'pending_setup' || !due(`order:${order.id}`)) continue;
      activateOrder(order, sqlNow());
    }
    for (const invoice of state.invoices) {
      if (seedInvoices.has(invoice.id) || invoice.status !== 'unpaid' || !due(`invoice:${invoice.id}`)) continue;
      markInvoicePaid(state, invoice, sqlNow());
    }
  });
}
