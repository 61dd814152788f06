import { defineEndpoint } from '../../../http/endpoint.js';
import { IdParamsSchema } from '../params.js';

const pdfHeaders = (invoiceId: string) => ({ 'content-disposition': `attachment; filename="invoice-${invoiceId}.pdf"` });

export default defineEndpoint({
  method: 'GET',
  url: '/v1/billing/invoices/:id/pdf',
  operationId: 'getInvoicePdf',
  summary: 'Invoice as PDF',
  description:
    'Rendered by the gateway from the invoice data: the same invoice gives the same bytes. Errors are still Problem+JSON. ' +
    'While every renderer of the gateway is busy and its queue full (or the account already has its share of the queue), the answer is 503 `renderer_busy` with Retry-After; ' +
    'an invoice whose render needs more memory than a renderer may use answers 500 `renderer_out_of_memory`.',
  tag: 'Billing',
  scope: 'read:billing',
  params: IdParamsSchema,
  responses: {
    200: {
      description: 'The invoice as a PDF document.',
      contentType: 'application/pdf',
      headers: { 'Content-Disposition': 'attachment; filename="invoice-<id>.pdf"' },
    },
  },
  answerHeaders: ({ params }) => pdfHeaders(params.id),
  errors: ['not_found', 'renderer_busy', 'renderer_out_of_memory'],
  async handler({ params, caller, deps, call, connection }) {
    const invoice = await deps.backend.getInvoiceDocument(caller.customer, params.id, call);
    const pdf = await deps.pdf.render(invoice, deps.config.issuer, { account: caller.account.id, connection, deadline: call.deadline });
    return {
      status: 200,
      body: Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength),
      headers: pdfHeaders(invoice.id),
    };
  },
});
