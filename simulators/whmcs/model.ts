/**
 * The simulator's data: roughly the WHMCS tables the implemented actions read and write, with the
 * values stored the way WHMCS stores them (decimal strings, display-form billing cycles, HTML-encoded
 * text). Actions render these rows into the response shapes of the facts file.
 */

export const CYCLES = ['monthly', 'quarterly', 'semiannually', 'annually', 'biennially', 'triennially'] as const;
export type Cycle = (typeof CYCLES)[number];

export const SETUP_FEE_KEYS = {
  monthly: 'msetupfee',
  quarterly: 'qsetupfee',
  semiannually: 'ssetupfee',
  annually: 'asetupfee',
  biennially: 'bsetupfee',
  triennially: 'tsetupfee',
} as const satisfies Record<Cycle, string>;
type SetupFeeKey = (typeof SETUP_FEE_KEYS)[Cycle];

export const CYCLE_MONTHS: Record<Cycle, number> = {
  monthly: 1,
  quarterly: 3,
  semiannually: 6,
  annually: 12,
  biennially: 24,
  triennially: 36,
};

/** The form services and order line items report (`Semi-Annually`), as opposed to AddOrder input (`semiannually`). */
export const CYCLE_DISPLAY: Record<Cycle | 'onetime' | 'free', string> = {
  monthly: 'Monthly',
  quarterly: 'Quarterly',
  semiannually: 'Semi-Annually',
  annually: 'Annually',
  biennially: 'Biennially',
  triennially: 'Triennially',
  onetime: 'One Time',
  free: 'Free Account',
};

/** One currency's row of `tblpricing`: decimal strings, `"-1.00"` for a disabled cycle. */
export type CyclePricing = Record<Cycle | SetupFeeKey, string>;

export interface Currency {
  id: number;
  code: string;
  prefix: string;
  suffix: string;
  format: string;
  rate: string;
}

export interface PaymentMethod {
  module: string;
  displayName: string;
  /** Inactive gateways are not listed by GetPaymentMethods and are refused by AddOrder. */
  active: boolean;
}

export interface ClientUser {
  id: number;
  name: string;
  email: string;
  isOwner: boolean;
}

export interface Client {
  id: number;
  uuid: string;
  firstname: string;
  lastname: string;
  companyname: string;
  email: string;
  countrycode: string;
  status: 'Active' | 'Inactive' | 'Closed';
  currencyId: number;
  /** Credit balance in the client's currency. */
  credit: string;
  groupid: number;
  language: string;
  users: ClientUser[];
}

export interface ProductGroup {
  id: number;
  name: string;
  slug: string;
}

export type ProductType = 'hostingaccount' | 'reselleraccount' | 'server' | 'other';

export interface Product {
  pid: number;
  gid: number;
  type: ProductType;
  name: string;
  slug: string;
  description: string;
  /** Server module name; "" when the product has none. */
  module: string;
  paytype: 'free' | 'onetime' | 'recurring';
  /**
   * How the product is listed in the shop. Never rendered: GetProducts returns every product without
   * a flag; it exists so fixtures and tests can say which pids are public.
   */
  listing: 'public' | 'hidden' | 'retired';
  /** Keyed by currency code. For onetime and free products the price lives in `monthly`. */
  pricing: Record<string, CyclePricing>;
  configOptionIds: number[];
}

export interface ProductCustomField {
  id: number;
  productId: number;
  name: string;
  description: string;
  required: boolean;
  /** GetProducts lists only fields shown on the order form; GetClientsProducts lists them all. */
  showOnOrder: boolean;
}

/** WHMCS's numeric-string option types: dropdown, radio, yes/no, quantity. */
export type ConfigOptionType = '1' | '2' | '3' | '4';

export interface ConfigOptionChoice {
  id: number;
  /** `internal|Display Name`, as entered in admin. */
  rawName: string;
  hidden: boolean;
  pricing: Record<string, CyclePricing>;
}

export interface ConfigOption {
  id: number;
  name: string;
  type: ConfigOptionType;
  minqty: number;
  /** 0 means no maximum. */
  maxqty: number;
  hidden: boolean;
  choices: ConfigOptionChoice[];
}

export interface Server {
  id: number;
  name: string;
  ipaddress: string;
  hostname: string;
  module: string;
}

export type ServiceStatus = 'Pending' | 'Active' | 'Completed' | 'Suspended' | 'Terminated' | 'Cancelled' | 'Fraud';

export interface Service {
  id: number;
  clientId: number;
  orderId: number;
  pid: number;
  /** 0 when the product has no module. */
  serverId: number;
  regdate: string;
  /** The hostname for VPS products. */
  domain: string;
  dedicatedip: string;
  /** Extra IPs, newline separated. */
  assignedips: string;
  status: ServiceStatus;
  suspensionreason: string;
  firstpaymentamount: string;
  recurringamount: string;
  paymentmethod: string;
  /** Display form: `Monthly`, `Semi-Annually`, `One Time`, `Free Account`. */
  billingcycle: string;
  /** `0000-00-00` for free and one-time services. */
  nextduedate: string;
  username: string;
  /** Stored decrypted; GetClientsProducts returns it in plain text. */
  password: string;
  /** Admin notes. */
  notes: string;
  /** The VPS power state the module functions change; not part of any WHMCS response. */
  power: 'on' | 'off';
  /** Custom field id → value. */
  customFieldValues: Record<string, string>;
  /** Config option id → choice id (dropdown, radio) or quantity (yes/no, quantity). */
  configOptionValues: Record<string, number>;
}

export interface Order {
  id: number;
  ordernum: number;
  clientId: number;
  /** `YYYY-MM-DD HH:MM:SS`. */
  date: string;
  amount: string;
  paymentmethod: string;
  /** 0 when the order has no invoice. */
  invoiceId: number;
  /** Pending, Active, Cancelled, Fraud, or an admin-defined custom status. */
  status: string;
  promocode: string;
  ipaddress: string;
  notes: string;
}

export interface InvoiceItem {
  id: number;
  type: string;
  /** The service id for Hosting items. */
  relid: number;
  description: string;
  amount: string;
  taxed: number;
}

/** A `tblaccounts` row. */
export interface Transaction {
  id: number;
  userid: number;
  gateway: string;
  date: string;
  description: string;
  amountin: string;
  fees: string;
  amountout: string;
  transid: string;
  invoiceid: number;
  refundid: number;
}

export type InvoiceStatus = 'Draft' | 'Unpaid' | 'Paid' | 'Cancelled' | 'Refunded' | 'Collections' | 'Payment Pending';

export interface Invoice {
  id: number;
  clientId: number;
  invoicenum: string;
  date: string;
  duedate: string;
  /** `0000-00-00 00:00:00` when unpaid. */
  datepaid: string;
  dateRefunded: string;
  dateCancelled: string;
  subtotal: string;
  /** Credit applied to this invoice; `total` is subtotal + tax − credit. */
  credit: string;
  tax: string;
  total: string;
  status: InvoiceStatus;
  paymentmethod: string;
  notes: string;
  createdAt: string;
  updatedAt: string;
  items: InvoiceItem[];
  transactions: Transaction[];
}

/** A `tblcredit` row; a negative amount is credit used. */
export interface CreditEntry {
  id: number;
  clientId: number;
  date: string;
  description: string;
  amount: string;
  relid: number;
}

export interface CancelRequest {
  id: number;
  date: string;
  /** The service id. */
  relid: number;
  reason: string;
  type: 'Immediate' | 'End of Billing Period';
  createdAt: string;
  updatedAt: string;
}

/** What a module function does to the VPS. */
export type ModuleEffect = 'power_on' | 'power_off' | 'reboot' | 'reinstall';

export interface SimulatorSettings {
  /** WHMCS `NoAutoApplyCredit` empty (the default): AddOrder pays new invoices from client credit. */
  autoApplyCredit: boolean;
  version: string;
  canonicalVersion: string;
  /** Base of `product_url`. */
  systemUrl: string;
}

export interface SimulatorState {
  settings: SimulatorSettings;
  currencies: Currency[];
  paymentMethods: PaymentMethod[];
  clients: Client[];
  productGroups: ProductGroup[];
  products: Product[];
  customFields: ProductCustomField[];
  configOptions: ConfigOption[];
  servers: Server[];
  services: Service[];
  orders: Order[];
  invoices: Invoice[];
  credits: CreditEntry[];
  cancelRequests: CancelRequest[];
  /**
   * The custom functions each server module defines (`<module>_<func>`), func name → effect.
   * Keys are lowercase because PHP function names are case-insensitive.
   */
  moduleFunctions: Record<string, Record<string, ModuleEffect>>;
}

// ---- money: decimal strings in, integer cents for arithmetic, decimal strings out ----

export function toCents(amount: string): number {
  const match = /^(-)?(\d+)(?:\.(\d{1,2}))?\d*$/.exec(amount.trim());
  if (!match) return 0;
  const cents = Number(match[2]) * 100 + Number((match[3] ?? '').padEnd(2, '0'));
  return match[1] ? -cents : cents;
}

export function fromCents(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const absolute = Math.abs(cents);
  return `${sign}${Math.floor(absolute / 100)}.${String(absolute % 100).padStart(2, '0')}`;
}

/** The formatted price strings WHMCS renders, e.g. `$8.00 USD`. */
export function formatPrice(currency: Currency | undefined, amount: string): string {
  return `${currency?.prefix ?? ''}${amount}${currency?.suffix ?? ''}`;
}

// ---- dates: WHMCS stores UTC-naive strings ----

export const EMPTY_DATE = '0000-00-00';
export const EMPTY_DATETIME = '0000-00-00 00:00:00';

export function sqlDate(date: Date): string {
  return date.toISOString().slice(0, 10);
}

export function sqlDateTime(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}

export function addMonths(date: Date, months: number): Date {
  const result = new Date(date);
  result.setUTCMonth(result.getUTCMonth() + months);
  return result;
}

export function nextId(rows: ReadonlyArray<{ id: number }>): number {
  return rows.reduce((max, row) => Math.max(max, row.id), 0) + 1;
}
