import { defineEndpoint } from '../../../http/endpoint.js';
import { IdParamsSchema } from '../params.js';

const pdfHeaders = (invoiceId: string) => ({ 'content-disposition': `attachment; filename="invoice-${invoiceId}.pdf"` });

export default defineEndpoint({
  method: 'GET',
  url: '/v1/billing/invoices/:id/pdf',
  operationId: 'getInvoicePdf',
  summary: 'Invoice as PDF',
  description:
    'Rendered by the gateway from the invoice data: the same invoice gives the same bytes. Errors are still Problem+JSON.',
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
  errors: ['not_found'],
  async handler({ params, caller, deps, call }) {
    const invoice = await deps.backend.getInvoiceDocument(caller.customer, params.id, call);
    // Loaded on first use: pdf-lib adds about 9 MB to every process that never renders a PDF.
    const { renderInvoicePdf } = await import('../../../pdf/invoice-pdf.js');
    const pdf = await renderInvoicePdf(invoice, deps.config.issuer);
    return {
      status: 200,
      body: Buffer.from(pdf),
      headers: pdfHeaders(invoice.id),
    };
  },
});
