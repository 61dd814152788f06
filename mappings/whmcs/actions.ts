/**
 * One declaration per WHMCS action the mapping uses. WHMCS is POST-only, so the HTTP method says
 * nothing about safety: these declarations decide what the client may retry, coalesce or cache.
 */
import type { WhmcsConfig } from './config.js';

export type ActionSafety = 'read' | 'write';

export interface ActionDeclaration {
  /** The WHMCS action name sent as `action`. */
  readonly name: string;
  readonly safety: ActionSafety;
  /** Retried once, and only when the first attempt failed before the request was sent. */
  readonly retry: boolean;
  /** Identical concurrent calls share one upstream request. */
  readonly coalesce: boolean;
  /** Answers are cached this long (then served stale while one refresh runs). */
  readonly cacheTtlMs?: number;
  /** Deadline of the whole call, retry included. */
  readonly timeoutMs: number;
  /** Cached answers of these actions are dropped once this action has succeeded. */
  readonly invalidates?: readonly ActionId[];
}

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

export type ActionTable = Readonly<Record<ActionId, ActionDeclaration>>;

/** Cancellation requests change through our own actions (which invalidate) or rarely by staff. */
const CANCELLATIONS_CACHE_TTL_MS = 10_000;

export function declareActions(config: WhmcsConfig): ActionTable {
  const timeoutOf = (name: string): number => config.actionTimeoutsMs[name] ?? config.timeoutMs;
  const read = (name: string, cacheTtlMs?: number): ActionDeclaration => ({
    name,
    safety: 'read',
    retry: true,
    coalesce: true,
    timeoutMs: timeoutOf(name),
    ...(cacheTtlMs === undefined ? {} : { cacheTtlMs }),
  });
  const write = (name: string, invalidates?: readonly ActionId[]): ActionDeclaration => ({
    name,
    safety: 'write',
    retry: false,
    coalesce: false,
    timeoutMs: timeoutOf(name),
    ...(invalidates === undefined ? {} : { invalidates }),
  });

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
