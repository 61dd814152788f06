/**
 * WHMCS list rows (GetInvoices, GetOrders, GetClientsProducts) read in one step (oneStepObject) are
 * held to z.object of the same fields, on the documented example rows and on every field of them
 * changed to each value of the table, or left out.
 */
import t from 'tap';
import { Invoice, INVOICE_ROW } from '../../../mappings/whmcs/parse-invoices.js';
import { Order, ORDER_LINE_ITEM, ORDER_ROW, OrderLineItem, Service, SERVICE_ROW } from '../../../mappings/whmcs/parse.js';
import { FIELD_VALUES, holdObjectToZod } from '../../helpers/one-step-fields.js';
import { invoiceRow, orderRow, service } from './fixtures/answers.js';

const ENUM_TEXTS = ['USD', 'usd', 'Paid', 'Payment Pending', 'Collections', 'Draft', 'Unknown', 'Active', 'Free Account', 'Semi-Annually', 'Completed', 'Refunded', 'Fraud', 'Cancelled', ' '];
/** The forms of a row's nested collections, well-formed and not. */
const COLLECTIONS = [
  { customfield: [{ id: 1, name: 'Order key', value: 'k-1' }] },
  { customfield: [{ id: '2' }, { id: 3, name: null, value: 'A &amp; B' }] },
  { customfield: [{ id: 'a', name: 'x', value: 'y' }] },
  { customfield: 'x' },
  { customfield: [] },
  { configoption: [{ option: 'OS', value: 'Debian' }, { option: null, value: 1 }] },
  { configoption: [{ option: 'OS' }] },
  { configoption: [] },
  { lineitem: [{ type: 'product', relid: 1 }, { type: 'addon', relid: '0', amount: '$1.00 USD' }] },
  { lineitem: [{ type: 1, relid: 1 }] },
  { lineitem: [{ type: 'product' }] },
  { lineitem: [] },
  { lineitem: 'x' },
];

holdObjectToZod(t, 'GetInvoices row', Invoice, INVOICE_ROW, invoiceRow, [...FIELD_VALUES, ...ENUM_TEXTS]);
holdObjectToZod(t, 'GetOrders row', Order, ORDER_ROW, orderRow, [...FIELD_VALUES, ...ENUM_TEXTS, ...COLLECTIONS]);
holdObjectToZod(t, 'GetOrders line item', OrderLineItem, ORDER_LINE_ITEM, orderRow.lineitems.lineitem[0] as Record<string, unknown>, [...FIELD_VALUES, ...ENUM_TEXTS]);
holdObjectToZod(t, 'GetClientsProducts row', Service, SERVICE_ROW, service, [...FIELD_VALUES, ...ENUM_TEXTS, ...COLLECTIONS]);
