/** GetInvoices, GetInvoice, and the credit auto-apply AddOrder performs. */
import { EMPTY_DATETIME, fromCents, nextId, sqlDate, toCents, type Invoice, type SimulatorState } from '../model.js';
import { phpInt, scalarParam, type ApiObject, type FormArray } from '../protocol.js';
import { clientCurrency, findClient, invoiceBalance, markInvoicePaid, pageParams, paginate, type ActionHandler } from './shared.js';

/** Pays as much of the invoice from the client's credit as it covers; Paid when fully covered. */
export function applyClientCredit(state: SimulatorState, invoice: Invoice, now: Date): void {
  const client = findClient(state, invoice.clientId);
  if (!client || invoice.status !== 'Unpaid') return;
  const amount = Math.min(toCents(client.credit), toCents(invoiceBalance(invoice)));
  if (amount <= 0) return;
  client.credit = fromCents(toCents(client.credit) - amount);
  invoice.credit = fromCents(toCents(invoice.credit) + amount);
  invoice.total = fromCents(toCents(invoice.total) - amount);
  state.credits.push({
    id: nextId(state.credits),
    clientId: client.id,
    date: sqlDate(now),
    description: `Credit Applied to Invoice #${invoice.id}`,
    amount: fromCents(-amount),
    relid: invoice.id,
  });
  if (toCents(invoiceBalance(invoice)) === 0) markInvoicePaid(invoice, now);
}

function renderListedInvoice(state: SimulatorState, invoice: Invoice): ApiObject {
  const client = findClient(state, invoice.clientId);
  const currency = clientCurrency(state, client);
  return {
    id: invoice.id,
    userid: invoice.clientId,
    firstname: client?.firstname ?? '',
    lastname: client?.lastname ?? '',
    companyname: client?.companyname ?? '',
    invoicenum: invoice.invoicenum,
    date: invoice.date,
    duedate: invoice.duedate,
    datepaid: invoice.datepaid,
    last_capture_attempt: EMPTY_DATETIME,
    date_refunded: invoice.dateRefunded,
    date_cancelled: invoice.dateCancelled,
    subtotal: invoice.subtotal,
    credit: invoice.credit,
    tax: invoice.tax,
    tax2: '0.00',
    total: invoice.total,
    taxrate: '0.000',
    taxrate2: '0.000',
    status: invoice.status,
    paymentmethod: invoice.paymentmethod,
    paymethodid: null,
    notes: invoice.notes,
    created_at: invoice.createdAt,
    updated_at: invoice.updatedAt,
    currencycode: currency?.code ?? '',
    currencyprefix: currency?.prefix ?? '',
    currencysuffix: currency?.suffix ?? '',
  };
}

/** `status`, including the pseudo-status Overdue (Unpaid and past its due date). */
function matchesStatus(invoice: Invoice, status: string | undefined, today: string): boolean {
  if (!status) return true;
  if (status === 'Overdue') return invoice.status === 'Unpaid' && invoice.duedate < today;
  return invoice.status === status;
}

type InvoiceComparator = (a: Invoice, b: Invoice) => number;

const ORDER_BY: Record<string, InvoiceComparator> = {
  id: (a, b) => a.id - b.id,
  invoicenumber: (a, b) => a.invoicenum.localeCompare(b.invoicenum),
  date: (a, b) => a.date.localeCompare(b.date),
  duedate: (a, b) => a.duedate.localeCompare(b.duedate),
  total: (a, b) => toCents(a.total) - toCents(b.total),
  status: (a, b) => a.status.localeCompare(b.status),
};

/** The default order is status DESC, then duedate ASC. */
const DEFAULT_ORDER: InvoiceComparator = (a, b) => b.status.localeCompare(a.status) || a.duedate.localeCompare(b.duedate);

function invoiceOrder(params: FormArray): InvoiceComparator {
  const compare = ORDER_BY[(scalarParam(params, 'orderby') ?? '').toLowerCase()];
  if (!compare) return DEFAULT_ORDER;
  return (scalarParam(params, 'order') ?? '').toLowerCase() === 'desc' ? (a, b) => compare(b, a) : compare;
}

export const getInvoices: ActionHandler = ({ params, state, now }) => {
  // Without `userid` every client's invoices come back.
  const userId = phpInt(params.userid);
  const status = scalarParam(params, 'status');
  const today = sqlDate(now);
  const compare = invoiceOrder(params);
  const matching = state.invoices
    .filter((invoice) => (!userId || invoice.clientId === userId) && matchesStatus(invoice, status, today))
    .sort((a, b) => compare(a, b) || a.id - b.id);
  const page = pageParams(params, 25);
  const rows = paginate(matching, page);
  return {
    result: 'success',
    totalresults: matching.length,
    startnumber: page.start,
    numreturned: rows.length,
    // An empty array, not an absent key, when there are none.
    invoices: rows.length === 0 ? [] : { invoice: rows.map((invoice) => renderListedInvoice(state, invoice)) },
  };
};

function renderTransactions(invoice: Invoice): ApiObject | string {
  if (invoice.transactions.length === 0) return '';
  const currency = '0'; // tblaccounts.currency is 0 for client payments
  return {
    transaction: invoice.transactions.map((row) => ({
      id: String(row.id),
      userid: String(row.userid),
      currency,
      gateway: row.gateway,
      date: row.date,
      description: row.description,
      amountin: row.amountin,
      fees: row.fees,
      amountout: row.amountout,
      rate: '1.00000',
      transid: row.transid,
      invoiceid: String(row.invoiceid),
      refundid: String(row.refundid),
    })),
  };
}

export const getInvoice: ActionHandler = ({ params, state }) => {
  // No owner filter: any client's invoice is returned.
  const invoice = state.invoices.find((row) => row.id === phpInt(params.invoiceid));
  // The one action whose error key is `status`, not `result`.
  if (!invoice) return { status: 'error', message: 'Invoice ID Not Found' };
  return {
    result: 'success',
    invoiceid: invoice.id,
    invoicenum: invoice.invoicenum,
    userid: invoice.clientId,
    date: invoice.date,
    duedate: invoice.duedate,
    datepaid: invoice.datepaid,
    lastcaptureattempt: EMPTY_DATETIME,
    subtotal: invoice.subtotal,
    credit: invoice.credit,
    tax: invoice.tax,
    tax2: '0.00',
    total: invoice.total,
    balance: invoiceBalance(invoice),
    taxrate: '0.000',
    taxrate2: '0.000',
    status: invoice.status,
    paymentmethod: invoice.paymentmethod,
    notes: invoice.notes,
    ccgateway: false,
    // Absent when the invoice has no items.
    items: invoice.items.length === 0 ? undefined : { item: invoice.items.map((item) => ({ ...item })) },
    transactions: renderTransactions(invoice),
  };
};
