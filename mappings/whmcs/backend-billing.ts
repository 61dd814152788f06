/**
 * Billing on WHMCS: the balance, the invoice list (always filtered by the clientid) and one
 * invoice's document (GetInvoice takes no owner filter: ownership is checked here).
 */
import type { Customer } from '../../src/backend/backend.js';
import type { Balance, Invoice, InvoiceDocument, PageRequest, PageResult } from '../../src/v1/schemas.js';
import { classified, IS_ID, notFound, type WhmcsCalls } from './backend-calls.js';
import type { WhmcsConfig } from './config.js';
import { mapInvoice, mapInvoiceDocument } from './map.js';
import { InvoiceAnswer, InvoicesAnswer } from './parse-invoices.js';

export interface WhmcsBilling {
  getBalance(customer: Customer): Promise<Balance>;
  listInvoices(customer: Customer, page: PageRequest): Promise<PageResult<Invoice>>;
  getInvoiceDocument(customer: Customer, id: string): Promise<InvoiceDocument>;
}

export function createWhmcsBilling(calls: WhmcsCalls, config: WhmcsConfig): WhmcsBilling {
  const { request, clientIdOf, clientDetails } = calls;

  async function getBalance(customer: Customer) {
    const account = await clientDetails(customer);
    return { credit: { amount: calls.needed('GetClientsDetails', 'client.credit (or, without client, credit)', account.credit), currency: account.currency_code } };
  }

  async function listInvoices(customer: Customer, page: PageRequest) {
    const answer = await request(
      'GetInvoices',
      // Without userid, WHMCS lists every client's invoices.
      { userid: clientIdOf(customer), limitstart: (page.page - 1) * page.perPage, limitnum: page.perPage, orderby: 'id', order: 'desc' },
      InvoicesAnswer,
    );
    calls.assertOwned('GetInvoices', customer, answer.invoices.map((invoice) => invoice.userid));
    // Older WHMCS versions give no currency per invoice: then it is the client's.
    const needsClientCurrency = answer.invoices.some((invoice) => invoice.currencycode === undefined);
    const clientCurrency = needsClientCurrency ? (await clientDetails(customer)).currency_code : '';
    return { items: answer.invoices.map((invoice) => mapInvoice(invoice, clientCurrency, config.timeZone)), total: answer.totalresults };
  }

  async function getInvoiceDocument(customer: Customer, id: string) {
    if (!IS_ID.test(id)) throw notFound('invoice');
    const [invoice, account] = await Promise.all([
      // GetInvoice answers "not found" with `status: "error"`.
      classified(request('GetInvoice', { invoiceid: id }, InvoiceAnswer), [{ match: /not found/i, error: () => notFound('invoice') }]),
      clientDetails(customer),
    ]);
    // GetInvoice takes no owner filter: another client's invoice is checked here.
    if (invoice.userid !== customer.upstreamId || invoice.invoiceid !== id) throw notFound('invoice');
    return mapInvoiceDocument(invoice, account, config.timeZone);
  }

  return { getBalance, listInvoices, getInvoiceDocument };
}
