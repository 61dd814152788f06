/**
 * Probing WHMCS actions without acting: each action is called with an id that cannot exist (0) or a
 * filter that matches nothing. WHMCS checks credentials and then the API role before the action
 * runs (WHMCS facts §0, "Check order"), so an answer of the action itself, even its own error
 * ("Client ID Not Found", "Service ID not found"), proves the role allows it; a role without it
 * answers HTTP 403 "Invalid Permissions: API action "x" is not allowed".
 */
import { BackendError } from '../../src/backend/backend.js';
import { CredentialHoldError } from '../../src/upstream/credential-hold.js';
import type { ServiceAction } from '../../src/v1/schemas.js';
import type { ActionId } from './actions.js';
import { UNUSABLE_ACTION } from './service-actions.js';
import { type FormParams, UpstreamBusinessError, type WhmcsClient } from './client.js';
import type { WhmcsConfig } from './config.js';

export type ProbeOutcome =
  /** The action ran (successfully or with its own error): the role allows it. */
  | { kind: 'answered'; message: string }
  /** "Invalid Permissions": the role does not include the action. */
  | { kind: 'denied'; message: string }
  /** WHMCS cannot run the action (a custom one not installed): UNUSABLE_ACTION. */
  | { kind: 'unknown_action'; message: string }
  /** Another 403: credentials, IP allow-list, access key, ban. */
  | { kind: 'refused'; message: string }
  /** No answer to judge by: unreachable, timed out, unreadable. */
  | { kind: 'failed'; message: string };

/** client.ts words every 403 this way (operator text, credentials redacted). */
const REFUSED = /^WHMCS refused the gateway: /;

/** What a failed call says about the action (see ProbeOutcome). */
export function failureOutcome(error: unknown): ProbeOutcome {
  if (error instanceof CredentialHoldError) {
    const seconds = Math.ceil((error.retryAfterMs ?? 0) / 1000);
    return { kind: 'refused', message: `not sent: the gateway holds its calls to WHMCS for ${seconds} s more, after WHMCS refused its credentials` };
  }
  if (error instanceof UpstreamBusinessError) {
    const message = error.upstreamMessage;
    return UNUSABLE_ACTION.test(message) ? { kind: 'unknown_action', message } : { kind: 'answered', message };
  }
  const message = error instanceof BackendError ? (error.operatorMessage ?? error.detail) : String(error);
  if (/invalid permissions/i.test(message)) return { kind: 'denied', message: message.replace(REFUSED, '') };
  if (REFUSED.test(message)) return { kind: 'refused', message: message.replace(REFUSED, '') };
  return { kind: 'failed', message };
}

export async function probe(client: WhmcsClient, id: ActionId, params: FormParams): Promise<ProbeOutcome> {
  try {
    await client.call(id, params);
    return { kind: 'answered', message: 'success' };
  } catch (error) {
    return failureOutcome(error);
  }
}

/**
 * Harmless parameters per action. Writes get id 0, which no WHMCS record has, and nothing else they
 * would need (AddOrder: no client, product or payment method), so each is refused by the action's
 * first check: AddOrder "Client ID Not Found", AcceptOrder "Order ID not found or Status not
 * Pending", Module* "Service ID is required" / "Service ID not found", AddCancelRequest "Service ID
 * Not Found" (WHMCS facts §1). Reads ask for one row at most, or for a filter nothing matches.
 */
export const PROBE_PARAMS: Readonly<Record<Exclude<ActionId, 'CancelRevoke'>, FormParams>> = {
  GetCurrencies: {},
  GetClientsDetails: { clientid: 0 },
  GetProducts: { module: 'reseller-gateway-doctor-probe' },
  GetOrders: { limitstart: 0, limitnum: 1 },
  // A service list would carry passwords: ask for a domain that cannot exist (.invalid, RFC 2606).
  GetClientsProducts: { domain: 'reseller-gateway-doctor.invalid', limitstart: 0, limitnum: 1 },
  GetInvoices: { limitstart: 0, limitnum: 1 },
  GetInvoice: { invoiceid: 0 },
  GetCancelledPackages: { limitstart: 0, limitnum: 1 },
  AddOrder: { clientid: 0 },
  AcceptOrder: { orderid: 0 },
  ModuleCustom: { serviceid: 0 },
  ModuleSuspend: { serviceid: 0 },
  ModuleUnsuspend: { serviceid: 0 },
  ModuleTerminate: { serviceid: 0 },
  AddCancelRequest: { serviceid: 0 },
};

type ProbedAction = keyof typeof PROBE_PARAMS;

/** Where each action sits in WHMCS's API role editor (WHMCS facts §0, "Role groups"). */
const ROLE_GROUPS: Readonly<Record<ProbedAction, string>> = {
  GetCurrencies: 'System',
  GetClientsDetails: 'Client',
  GetClientsProducts: 'Client',
  GetProducts: 'Products',
  GetOrders: 'Orders',
  AddOrder: 'Orders',
  AcceptOrder: 'Orders',
  GetInvoices: 'Billing',
  GetInvoice: 'Billing',
  GetCancelledPackages: 'Support',
  AddCancelRequest: 'Support',
  ModuleCustom: 'Service',
  ModuleSuspend: 'Service',
  ModuleUnsuspend: 'Service',
  ModuleTerminate: 'Service',
};

const SERVICE_ACTION_CALLS: Readonly<Record<ServiceAction, ActionId>> = {
  start: 'ModuleCustom',
  stop: 'ModuleCustom',
  reboot: 'ModuleCustom',
  reinstall: 'ModuleCustom',
  suspend: 'ModuleSuspend',
  unsuspend: 'ModuleUnsuspend',
  terminate: 'ModuleTerminate',
  cancel: 'AddCancelRequest',
  cancel_revoke: 'CancelRevoke',
};

/** The stock actions this deployment calls (the custom cancel-revoke action has its own check). */
export function usedActions(config: WhmcsConfig, serviceActions: readonly ServiceAction[]): ProbedAction[] {
  const used = new Set<ActionId>([
    'GetCurrencies',
    'GetClientsDetails',
    'GetProducts',
    'GetOrders',
    'GetClientsProducts',
    'GetInvoices',
    'GetInvoice',
    'AddOrder',
  ]);
  if (config.acceptOrder.enabled) used.add('AcceptOrder');
  if (config.trackCancellations) used.add('GetCancelledPackages');
  for (const action of serviceActions) used.add(SERVICE_ACTION_CALLS[action]);
  used.delete('CancelRevoke');
  return [...used] as ProbedAction[];
}

export function roleGroup(id: ProbedAction): string {
  return ROLE_GROUPS[id];
}

/** Runs `work` over `items`, at most `limit` at a time (the doctor must not crowd WHMCS's PHP workers). */
export async function inBatches<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let start = 0; start < items.length; start += limit) {
    results.push(...(await Promise.all(items.slice(start, start + limit).map(work))));
  }
  return results;
}
