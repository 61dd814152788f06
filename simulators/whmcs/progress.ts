/**
 * Opt-in life of its own for the sandbox: WHMCS changes state without being asked (an admin accepts
 * an order, a customer pays), and webhook events come from such changes. Only rows created after
 * the simulator started move, so seed data stays as the fixtures describe it.
 */
import { markInvoicePaid } from './actions/shared.js';
import type { SimulatorState } from './model.js';

export interface ProgressOptions {
  /** How long after it was first seen a pending order is accepted and an unpaid invoice paid. */
  afterMs: number;
}

export function startProgress(state: SimulatorState, options: ProgressOptions): () => void {
  const seedOrders = new Set(state.orders.map((order) => order.id));
  const seedInvoices = new Set(state.invoices.map((invoice) => invoice.id));
  const firstSeen = new Map<string, number>();
  const due = (key: string, now: number): boolean => {
    if (!firstSeen.has(key)) firstSeen.set(key, now);
    return now - (firstSeen.get(key) as number) >= options.afterMs;
  };
  const tick = (): void => {
    const now = Date.now();
    for (const order of state.orders) {
      if (seedOrders.has(order.id) || order.status !== 'Pending' || !due(`order:${order.id}`, now)) continue;
      for (const service of state.services) {
        if (service.orderId === order.id && service.status === 'Pending') service.status = 'Active';
      }
      order.status = 'Active';
    }
    for (const invoice of state.invoices) {
      if (seedInvoices.has(invoice.id) || invoice.status !== 'Unpaid' || !due(`invoice:${invoice.id}`, now)) continue;
      markInvoicePaid(invoice, new Date(now));
    }
  };
  const timer = setInterval(tick, Math.max(50, Math.min(1_000, options.afterMs / 4)));
  timer.unref();
  return () => clearInterval(timer);
}
