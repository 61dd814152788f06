/**
 * `doctor`'s check of the products whose orders the gateway cannot get set up. Orders placed
 * through the admin API get an invoice whose line has task `renew` (Invoice/Service.php
 * generateForOrder, 0.6.22 to 0.8.5), not the checkout's `activate`: paying it fails an order never
 * activated (Order/Service.php renewFromOrder: failed_renew, FOSSBilling#2693). So a priced product
 * set up after payment, which the gateway leaves for its payment to activate, is never provisioned.
 */
import type { DoctorCheck } from '../../src/backend/backend.js';
import { isSold } from './catalog.js';
import type { FossbillingConfig } from './config.js';
import { productPrices } from './map.js';
import { ProductListAnswer } from './parse.js';

/** The catalog's one page, as the gateway reads it (operations.ts). */
const PER_PAGE = 500;

export async function activationCheck(call: (method: 'product/get_list', params: Record<string, unknown>) => Promise<unknown>, config: FossbillingConfig): Promise<DoctorCheck> {
  const check = { id: 'order-activation', title: 'Paid orders are set up' };
  if (config.activateOrders) return { ...check, status: 'pass', detail: 'activateOrders is on: order/create activates every order.' };
  let products;
  try {
    products = ProductListAnswer.parse(await call('product/get_list', { page: 1, per_page: PER_PAGE })).list;
  } catch (error) {
    return { ...check, status: 'skip', detail: `Not checked: ${error instanceof Error ? error.message : String(error)}`, fix: 'Run doctor again once FOSSBilling answers.' };
  }
  const publicIds = new Set(config.publicProductIds);
  const waiting = products.filter(
    (product) =>
      isSold(product, publicIds) &&
      (product.setup ?? 'after_payment') === 'after_payment' &&
      productPrices(product, config.defaultCurrency).some((price) => Number(price.price) !== 0 || Number(price.setup_fee) !== 0),
  );
  if (waiting.length === 0) return { ...check, status: 'pass', detail: 'No priced product sold is set up after payment.' };
  return {
    ...check,
    status: 'warn',
    detail:
      `Orders placed through the gateway for ${waiting.map((product) => `${product.id} (${product.title})`).join(', ')} ` +
      "are not set up when paid: these products are set up after payment, and the invoice FOSSBilling's admin order/create " +
      'issues renews the order instead of activating it, which fails (failed_renew; shown pending).',
    fix:
      'Set these products up after_order in FOSSBilling, or turn on upstream.fossbilling.activateOrders (either activates ' +
      'orders before payment), or have staff activate paid orders (order/activate with force, as they are failed_renew).',
  };
}
