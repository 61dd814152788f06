/**
 * The invoice AddOrder makes (orderfunctions.php calcCartTotals): per service a "Setup" item for
 * its setup fees, when there are any, and a "Hosting" item for the rest of its first payment;
 * free services are not invoiced, and an order with nothing to invoice gets no invoice at all.
 */
import {
  CYCLE_MONTHS,
  EMPTY_DATETIME,
  addMonths,
  fromCents,
  nextId,
  sqlDate,
  sqlDateTime,
  toCents,
  type Client,
  type Cycle,
  type Invoice,
  type InvoiceItem,
  type Product,
  type Service,
  type SimulatorState,
} from '../model.js';
import { choiceDisplayName, groupName, markInvoicePaid } from './shared.js';

export type BillingCycle = Cycle | 'onetime' | 'free';

/** One ordered service and what its cart line cost. */
export interface InvoiceLine {
  service: Service;
  product: Product;
  cycle: BillingCycle;
  configOptionValues: Record<string, number>;
  setupCents: number;
  firstPaymentCents: number;
}

function formatDay(date: Date): string {
  const [year, month, day] = sqlDate(date).split('-');
  return `${day}/${month}/${year}`;
}

function optionLines(state: SimulatorState, values: Record<string, number>): string[] {
  return state.configOptions
    .filter((option) => option.id in values)
    .map((option) => {
      const value = values[option.id] ?? 0;
      if (option.type === '3') return `${option.name}: ${value ? 'Yes' : 'No'}`;
      const choice = option.type === '4' ? option.choices[0] : option.choices.find((row) => row.id === value);
      const name = choice ? choiceDisplayName(choice) : '';
      return option.type === '4' ? `${option.name}: ${value} x ${name}` : `${option.name}: ${name}`;
    });
}

function itemDescription(state: SimulatorState, line: InvoiceLine, now: Date): string {
  const host = line.service.domain ? ` - ${line.service.domain}` : '';
  const cycle = line.cycle;
  const period =
    cycle === 'onetime' || cycle === 'free'
      ? ''
      : ` (${formatDay(now)} - ${formatDay(new Date(addMonths(now, CYCLE_MONTHS[cycle]).getTime() - 86_400_000))})`;
  return [`${groupName(state, line.product)} - ${line.product.name}${host}${period}`, ...optionLines(state, line.configOptionValues)].join('\n');
}

/** `if (0 < $product_setup)` a Setup item; `if ($billingcycle != "free")` the Hosting item. */
function itemsOf(state: SimulatorState, line: InvoiceLine, now: Date): Array<Omit<InvoiceItem, 'id'>> {
  const relid = line.service.id;
  const setupItem = { type: 'Setup', relid, description: `${line.product.name} Setup Fee`, amount: fromCents(line.setupCents), taxed: 0 };
  const setup = line.setupCents > 0 ? [setupItem] : [];
  if (line.cycle === 'free') return setup;
  const amount = fromCents(line.firstPaymentCents - line.setupCents);
  return [...setup, { type: 'Hosting', relid, description: itemDescription(state, line, now), amount, taxed: 0 }];
}

/** The order's invoice, or undefined when there is nothing to invoice (tblorders.invoiceid stays 0). */
export function createOrderInvoice(state: SimulatorState, client: Client, lines: InvoiceLine[], paymentmethod: string, now: Date): Invoice | undefined {
  const firstItemId = nextId(state.invoices.flatMap((invoice) => invoice.items));
  const items = lines.flatMap((line) => itemsOf(state, line, now)).map((item, index) => ({ id: firstItemId + index, ...item }));
  if (items.length === 0) return undefined;
  const subtotal = fromCents(items.reduce((sum, row) => sum + toCents(row.amount), 0));
  const invoice: Invoice = {
    id: nextId(state.invoices),
    clientId: client.id,
    invoicenum: '',
    date: sqlDate(now),
    duedate: sqlDate(now),
    datepaid: EMPTY_DATETIME,
    dateRefunded: EMPTY_DATETIME,
    dateCancelled: EMPTY_DATETIME,
    subtotal,
    credit: '0.00',
    tax: '0.00',
    total: subtotal,
    status: 'Unpaid',
    paymentmethod,
    notes: '',
    createdAt: sqlDateTime(now),
    updatedAt: sqlDateTime(now),
    items,
    transactions: [],
  };
  state.invoices.push(invoice);
  if (toCents(subtotal) === 0) markInvoicePaid(invoice, now);
  return invoice;
}
