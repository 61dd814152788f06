/**
 * The FOSSBilling admin methods the mapping uses, and how each may be sent: reads are retried once
 * (only when no answer had started) and coalesced; writes are sent once and never coalesced.
 */
import { type ActionTable, readAction, writeAction } from '../../src/upstream/policy.js';
import type { FossbillingConfig } from './config.js';

export const READS = [
  'client/get',
  'product/get_list',
  'product/get_types',
  'order/get',
  'order/get_list',
  'order/service',
  'invoice/get',
  'invoice/get_list',
  // doctor only: the currency every catalog price is in.
  'currency/get_default',
] as const;
export const WRITES = ['order/create', 'order/suspend', 'order/unsuspend', 'order/cancel'] as const;
export type FossbillingMethod = (typeof READS)[number] | (typeof WRITES)[number];

/** The health probe: cheap, and a read every token the mapping can use is allowed to make. */
export const PROBE: FossbillingMethod = 'product/get_types';

export function declareMethods(config: FossbillingConfig): ActionTable<FossbillingMethod> {
  const timeoutOf = (method: string): number => config.methodTimeoutsMs[method] ?? config.timeoutMs;
  const table = {} as Record<FossbillingMethod, ActionTable<FossbillingMethod>[FossbillingMethod]>;
  for (const method of READS) table[method] = readAction(method, timeoutOf(method));
  // Orders change the stock FOSSBilling shows, not the catalog: no write invalidates it.
  for (const method of WRITES) table[method] = writeAction(method, timeoutOf(method));
  table['product/get_list'] = readAction('product/get_list', timeoutOf('product/get_list'), config.productCacheTtlMs);
  // A retry would only hide a flapping upstream.
  table[PROBE] = { ...table[PROBE], retry: false };
  return table;
}
