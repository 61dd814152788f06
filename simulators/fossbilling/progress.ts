/**
 * Opt-in life of its own for the sandbox, as on the WHMCS simulator: staff activate new orders and
 * customers pay new invoices, so webhook events flow. Only rows created after the simulator started
 * move, so seed data stays as the fixtures describe it.
 */
import type { FossbillingState } from './state.js';

export interface ProgressOptions {
  /** How long after it was first seen a pending order is activated and an unpaid invoice paid. */
  afterMs: number;
}

/** FOSSBilling's own timestamp format (MySQL DATETIME, UTC here). */
const sqlNow = (): string => new Date().toISOString().slice(0, 19).replace('T', ' ');

export function startProgress(state: FossbillingState, options: ProgressOptions): () => void {
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
      if (seedOrders.has(order.id) || order.status !== 'pending_setup' || !due(`order:${order.id}`, now)) continue;
      order.status = 'active';
      order.activated_at = sqlNow();
      order.hosting ??= { ip: '192.0.2.10', domain: `site${order.id}.example.com`, username: `user${order.id}` };
    }
    for (const invoice of state.invoices) {
      if (seedInvoices.has(invoice.id) || invoice.status !== 'unpaid' || !due(`invoice:${invoice.id}`, now)) continue;
      invoice.status = 'paid';
      invoice.paid_at = sqlNow();
    }
  };
  const timer = setInterval(tick, Math.max(50, Math.min(1_000, options.afterMs / 4)));
  timer.unref();
  return () => clearInterval(timer);
}
