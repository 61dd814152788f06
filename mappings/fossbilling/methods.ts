/**
 * The FOSSBilling admin methods the mapping uses, and how each may be sent: reads are retried
 * (only when nothing was sent) and coalesced; writes are sent once and never coalesced.
 */
import type { FossbillingConfig } from './config.js';
import type { CallPolicy } from './transport.js';

export const READS = [
  'client/get',
  'product/get_list',
  'product/get',
  'product/get_types',
  'order/get',
  'order/get_list',
  'order/service',
  'invoice/get',
  'invoice/get_list',
] as const;
export const WRITES = ['order/create', 'order/suspend', 'order/unsuspend', 'order/cancel', 'order/uncancel'] as const;
export type FossbillingMethod = (typeof READS)[number] | (typeof WRITES)[number];

export type PolicyTable = Readonly<Record<FossbillingMethod, CallPolicy>>;

export function declarePolicies(config: FossbillingConfig): PolicyTable {
  const timeoutOf = (method: string): number => config.methodTimeoutsMs[method] ?? config.timeoutMs;
  const table = {} as Record<FossbillingMethod, CallPolicy>;
  for (const method of READS) table[method] = { retry: true, coalesce: true, timeoutMs: timeoutOf(method) };
  for (const method of WRITES) table[method] = { retry: false, coalesce: false, write: true, timeoutMs: timeoutOf(method) };
  table['product/get_list'] = { ...table['product/get_list'], cacheMs: config.productCacheTtlMs };
  // The health probe: a retry would only hide a flapping upstream.
  table['product/get_types'] = { ...table['product/get_types'], retry: false };
  return table;
}
