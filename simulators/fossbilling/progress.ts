/**
 * Opt-in life of its own for the sandbox, as on the WHMCS simulator: staff activate new orders (paid
 * ones too, which FOSSBilling itself leaves unprovisioned) and customers pay new invoices, so webhook events flow. Only rows created after the simulator started
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
      // A paid order whose renew task found no service is failed_renew: staff activate it with
      // order/activate and force (activateOrder refuses it otherwise, 0.6.22 to 0.8.5).
      const waiting = order.status === 'pending_setup' || (order.status === 'failed_renew' && order.activated_at === null);
      if (seedOrders.has(order.id) || !waiting || !due(`order:${order.id}`)) continue;
      activateOrder(order, sqlNow(), true);
    }
    for (const invoice of state.invoices) {
      if (seedInvoices.has(invoice.id) || invoice.status !== 'unpaid' || !due(`invoice:${invoice.id}`)) continue;
      markInvoicePaid(state, invoice, sqlNow());
    }
  });
}
