/**
 * Opt-in life of its own for the sandbox: WHMCS changes state without being asked (an admin accepts
 * an order, a customer pays), and webhook events come from such changes. Only rows created after
 * the simulator started move, so seed data stays as the fixtures describe it.
 */
import { type ProgressOptions, startProgressLoop } from '../shared/progress.js';
import { markInvoicePaid } from './actions/shared.js';
import type { SimulatorState } from './model.js';

export type { ProgressOptions } from '../shared/progress.js';

export function startProgress(state: SimulatorState, options: ProgressOptions): () => void {
  const seedOrders = new Set(state.orders.map((order) => order.id));
  const seedInvoices = new Set(state.invoices.map((invoice) => invoice.id));
  return startProgressLoop(options, (due) => {
    for (const order of state.orders) {
      if (seedOrders.has(order.id) || order.status !== 'Pending' || !due(`order:${order.id}`)) continue;
      for (const service of state.services) {
        if (service.orderId === order.id && service.status === 'Pending') service.status = 'Active';
      }
      order.status = 'Active';
    }
    for (const invoice of state.invoices) {
      if (seedInvoices.has(invoice.id) || invoice.status !== 'Unpaid' || !due(`invoice:${invoice.id}`)) continue;
      markInvoicePaid(invoice, new Date());
    }
  });
}
