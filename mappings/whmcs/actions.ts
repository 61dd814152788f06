/**
 * One declaration per WHMCS action the mapping uses. WHMCS is POST-only, so the HTTP method says
 * nothing about safety: these declarations decide what the client may retry, coalesce or cache.
 */
import { type ActionTable as UpstreamActionTable, readAction, writeAction } from '../../src/upstream/policy.js';
import type { WhmcsConfig } from './config.js';

export type ActionId =
  | 'GetClientsDetails'
  | 'GetProducts'
  | 'GetOrders'
  | 'GetClientsProducts'
  | 'GetInvoices'
  | 'GetInvoice'
  | 'GetCancelledPackages'
  | 'GetCurrencies'
  | 'AddOrder'
  | 'AcceptOrder'
  | 'ModuleCustom'
  | 'ModuleSuspend'
  | 'ModuleUnsuspend'
  | 'ModuleTerminate'
  | 'AddCancelRequest'
  | 'CancelRevoke';

export type ActionTable = UpstreamActionTable<ActionId>;

/** Cancellation requests change through our own actions (which invalidate) or rarely by staff. */
const CANCELLATIONS_CACHE_TTL_MS = 10_000;

export function declareActions(config: WhmcsConfig): ActionTable {
  const timeoutOf = (name: string): number => config.actionTimeoutsMs[name] ?? config.timeoutMs;
  const read = (name: string, cacheTtlMs?: number) => readAction<ActionId>(name, timeoutOf(name), cacheTtlMs);
  const write = (name: string, invalidates?: readonly ActionId[]) => writeAction<ActionId>(name, timeoutOf(name), invalidates);

  return {
    GetClientsDetails: read('GetClientsDetails'),
    GetProducts: read('GetProducts', config.productCacheTtlMs),
    GetOrders: read('GetOrders'),
    GetClientsProducts: read('GetClientsProducts'),
    GetInvoices: read('GetInvoices'),
    GetInvoice: read('GetInvoice'),
    GetCancelledPackages: read('GetCancelledPackages', CANCELLATIONS_CACHE_TTL_MS),
    // The health probe: a retry would only hide a flapping upstream.
    GetCurrencies: { ...read('GetCurrencies'), retry: false },
    // No catalog to drop: the one thing it changes there, stock, the next order reads uncached
    // (backend-orders.ts placeOrder), and the v1 catalog does not show it.
    AddOrder: write('AddOrder'),
    AcceptOrder: write('AcceptOrder'),
    ModuleCustom: write('ModuleCustom'),
    ModuleSuspend: write('ModuleSuspend'),
    ModuleUnsuspend: write('ModuleUnsuspend'),
    ModuleTerminate: write('ModuleTerminate'),
    AddCancelRequest: write('AddCancelRequest', ['GetCancelledPackages']),
    CancelRevoke: write(config.cancelRevokeAction, ['GetCancelledPackages']),
  };
}
