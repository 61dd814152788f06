/**
 * Order validation against the product. AddOrder does not validate: a disabled cycle, an unknown
 * option id or a bad choice is silently replaced by a default, and an out-of-range quantity is
 * clamped; a product out of stock is ordered all the same. So every such mistake is refused here,
 * before AddOrder.
 */
import { BackendError } from '../../src/backend/backend.js';
import type { OrderInput } from '../../src/v1/schemas.js';
import { productPrices } from './map.js';
import type { RawProduct, RawProductConfigOption } from './parse.js';
import type { PhpArrayValue } from './php-serialize.js';

function invalid(detail: string): BackendError {
  return new BackendError('validation', detail);
}

function checkBillingCycle(product: RawProduct, input: OrderInput, currency: string): void {
  const offered = productPrices(product)
    .filter((price) => price.currency === currency)
    .map((price) => price.billing_cycle);
  if (offered.length === 0) throw invalid(`product_id: product ${product.pid} is not sold in the account's currency (${currency}).`);
  if (!offered.includes(input.billing_cycle)) {
    throw invalid(`billing_cycle: "${input.billing_cycle}" is not offered for product ${product.pid}; offered: ${offered.join(', ')}.`);
  }
}

/** AddOrder oversells: it places an order for a product with no stock left (calcCartTotals). */
function checkStock(product: RawProduct): void {
  if (product.stockcontrol && !(product.stocklevel !== undefined && product.stocklevel > 0)) {
    throw invalid(`product_id: product ${product.pid} is out of stock.`);
  }
}

type OptionValue = NonNullable<OrderInput['config_options']>[string];

/** The integer WHMCS expects for one option, or a validation error naming the field. */
function optionValue(option: RawProductConfigOption, value: OptionValue): number {
  const field = `config_options.${option.id}`;
  switch (option.type) {
    case 'dropdown':
    case 'radio': {
      const choiceId = typeof value === 'boolean' ? undefined : String(value);
      const choice = option.options.find((candidate) => candidate.id === choiceId);
      if (!choice) {
        const ids = option.options.map((candidate) => candidate.id).join(', ');
        throw invalid(`${field}: ${JSON.stringify(value)} is not a choice of this option; choices: ${ids}.`);
      }
      return Number(choice.id);
    }
    case 'yesno':
      if (typeof value !== 'boolean') throw invalid(`${field}: must be true or false.`);
      return value ? 1 : 0;
    case 'quantity': {
      // WHMCS clamps a quantity out of bounds without a word: one whose bounds it did not state
      // could be billed and set up as another than asked.
      if (option.minqty == null || option.maxqty == null) {
        throw invalid(`${field}: the billing system does not state this option's bounds, so a quantity cannot be ordered through the API; leave it out for its default.`);
      }
      const min = option.minqty;
      // A maximum of 0 means no maximum in WHMCS.
      const max = option.maxqty ? option.maxqty : Number.MAX_SAFE_INTEGER;
      if (typeof value !== 'number' || !Number.isInteger(value)) throw invalid(`${field}: must be an integer quantity.`);
      if (value < min || value > max) {
        const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `between ${min} and ${max}`;
        throw invalid(`${field}: quantity must be ${range}.`);
      }
      return value;
    }
  }
}

/**
 * Checks the order against the product and returns the config options as AddOrder takes them
 * (option id → value). An option left out gets WHMCS's own default (its first visible choice, the
 * minimum quantity, "no"); sending a default ourselves could pick a hidden choice, which WHMCS does not flag.
 */
export function validateOrder(product: RawProduct, input: OrderInput, currency: string): Array<[number, PhpArrayValue]> {
  checkStock(product);
  checkBillingCycle(product, input, currency);
  return Object.entries(input.config_options ?? {}).map(([optionId, value]): [number, PhpArrayValue] => {
    const option = product.configoptions.find((candidate) => candidate.id === optionId);
    if (!option) throw invalid(`config_options.${optionId}: product ${product.pid} has no such option.`);
    return [Number(option.id), optionValue(option, value)];
  });
}
