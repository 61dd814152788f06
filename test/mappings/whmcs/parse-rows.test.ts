/**
 * WHMCS list rows read in one step (oneStepObject) are held to z.object of the same fields, on the
 * documented example rows and on every field of them changed to each value of the table, or left out.
 */
import t from 'tap';
import { Invoice, INVOICE_ROW } from '../../../mappings/whmcs/parse-invoices.js';
import { Service, SERVICE_ROW } from '../../../mappings/whmcs/parse.js';
import { FIELD_VALUES, holdObjectToZod } from '../../helpers/one-step-fields.js';
import { invoiceRow, service } from './fixtures/answers.js';

const ENUM_TEXTS = ['USD', 'usd', 'Paid', 'Payment Pending', 'Collections', 'Draft', 'Unknown', 'Active', 'Free Account', 'Semi-Annually', 'Completed'];
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
];

holdObjectToZod(t, 'GetInvoices row', Invoice, INVOICE_ROW, invoiceRow, [...FIELD_VALUES, ...ENUM_TEXTS]);
holdObjectToZod(t, 'GetClientsProducts row', Service, SERVICE_ROW, service, [...FIELD_VALUES, ...ENUM_TEXTS, ...COLLECTIONS]);
