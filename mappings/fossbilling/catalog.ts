/** Which of FOSSBilling's products the gateway sells: shared by the catalog and `doctor`. */
import { ownEntry } from '../../src/own-entry.js';
import { PAY_TYPES } from './map.js';
import type { RawProduct } from './parse.js';

/**
 * A disabled product is not sold at all (FOSSBilling's guest catalog and product/get ask for
 * `enabled`), allow-listed or not; `hidden` only keeps it off FOSSBilling's own listings.
 */
export const isSold = (product: RawProduct, publicIds: ReadonlySet<string>): boolean =>
  ownEntry(PAY_TYPES, product.pricing.type ?? '') !== undefined &&
  product.status === 'enabled' &&
  (publicIds.size > 0 ? publicIds.has(product.id) : !product.hidden);
