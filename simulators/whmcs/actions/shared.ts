/** What every action handler gets and returns, plus the lookups several actions share. */
import {
  fromCents,
  sqlDateTime,
  toCents,
  type Client,
  type ConfigOptionChoice,
  type Currency,
  type Invoice,
  type Product,
  type SimulatorState,
} from '../model.js';
import { phpInt, type ApiObject, type FormArray } from '../protocol.js';

export interface ActionContext {
  /** Already HTML-encoded, as WHMCS sanitises input before the action runs. */
  params: FormArray;
  state: SimulatorState;
  now: Date;
  quirks: SimulatorQuirks;
}

/**
 * Answer variants seen on real WHMCS installs and WHMCS-compatible servers, switchable at run time so
 * tests can check that the mapping does not rely on what such a server leaves out.
 */
export interface SimulatorQuirks {
  /** GetClientsProducts answers carry no `customfields` (as on servers that do not expose them). */
  hideServiceCustomFields: boolean;
}

export type ActionHandler = (context: ActionContext) => ApiObject;

/** A business error: HTTP 200 with `result: error`. */
export function failure(message: string, extra: ApiObject = {}): ApiObject {
  return { result: 'error', message, ...extra };
}

export function findClient(state: SimulatorState, id: number): Client | undefined {
  return state.clients.find((client) => client.id === id);
}

export function clientCurrency(state: SimulatorState, client: Client | undefined): Currency | undefined {
  return state.currencies.find((currency) => currency.id === client?.currencyId);
}

export function findProduct(state: SimulatorState, pid: number): Product | undefined {
  return state.products.find((product) => product.pid === pid);
}

export function groupName(state: SimulatorState, product: Product | undefined): string {
  return state.productGroups.find((group) => group.id === product?.gid)?.name ?? '';
}

export function paymentMethodName(state: SimulatorState, module: string): string {
  return state.paymentMethods.find((method) => method.module === module)?.displayName ?? module;
}

/** `internal|Display Name` → its display part (the whole name when there is no `|`). */
export function choiceDisplayName(choice: ConfigOptionChoice): string {
  const separator = choice.rawName.indexOf('|');
  return separator < 0 ? choice.rawName : choice.rawName.slice(separator + 1);
}

/** What WHMCS calls `required`: the internal value before `|`. */
export function choiceInternalValue(choice: ConfigOptionChoice): string {
  const separator = choice.rawName.indexOf('|');
  return separator < 0 ? choice.rawName : choice.rawName.slice(0, separator);
}

export interface Page {
  start: number;
  size: number;
}

/** `limitstart` (0-based offset) and `limitnum` (page size; 0 or absent means the action's default). */
export function pageParams(params: FormArray, defaultSize: number): Page {
  return { start: Math.max(0, phpInt(params.limitstart)), size: Math.max(0, phpInt(params.limitnum)) || defaultSize };
}

export function paginate<T>(rows: T[], page: Page): T[] {
  return rows.slice(page.start, page.start + page.size);
}

/** Total minus net payments received. */
export function invoiceBalance(invoice: Invoice): string {
  const paid = invoice.transactions.reduce((sum, row) => sum + toCents(row.amountin) - toCents(row.amountout), 0);
  return fromCents(toCents(invoice.total) - paid);
}

export function markInvoicePaid(invoice: Invoice, now: Date): void {
  invoice.status = 'Paid';
  invoice.datepaid = sqlDateTime(now);
  invoice.updatedAt = invoice.datepaid;
  // Sequential paid-invoice numbering, as the seed invoices have.
  invoice.invoicenum = `${invoice.datepaid.slice(0, 4)}-${String(invoice.id).padStart(4, '0')}`;
}
