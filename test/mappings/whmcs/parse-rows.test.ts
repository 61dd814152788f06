/**
 * WHMCS list rows read in one step (oneStepObject) are held to z.object of the same fields, on the
 * documented example row and on every field of it changed to each value of the table, or left out.
 */
import t from 'tap';
import { Invoice, INVOICE_ROW } from '../../../mappings/whmcs/parse-invoices.js';
import { FIELD_VALUES, holdObjectToZod } from '../../helpers/one-step-fields.js';
import { invoiceRow } from './fixtures/answers.js';

const MORE_VALUES = ['USD', 'usd', 'Paid', 'Payment Pending', 'Collections', 'Draft', 'Unknown'];

holdObjectToZod(t, 'GetInvoices row', Invoice, INVOICE_ROW, invoiceRow, [...FIELD_VALUES, ...MORE_VALUES]);
