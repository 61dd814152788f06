/**
 * The slow-backend part's upstream call, one GetInvoices page as a WHMCS API form: what its direct
 * runs send and what the relay (bench/relay-server.ts, which loads only this) sends for each page.
 */
export const GET_INVOICES_PATH = '/includes/api.php';
export const FORM_TYPE = 'application/x-www-form-urlencoded';

export function getInvoicesForm(credentials: { identifier: string; secret: string }, userid: string, page: number, perPage: number): string {
  const { identifier, secret } = credentials;
  return new URLSearchParams({ action: 'GetInvoices', userid, limitstart: String((page - 1) * perPage), limitnum: String(perPage), orderby: 'id', order: 'desc', responsetype: 'json', identifier, secret }).toString();
}
