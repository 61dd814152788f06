import { defineEndpoint } from '../../../http/endpoint.js';
import { PageQuerySchema, pageSchema, paginate, repaginate } from '../../../http/pagination.js';
import { InvoiceSchema } from '../../../v1/schemas.js';

export default defineEndpoint({
  method: 'GET',
  url: '/v1/billing/invoices',
  operationId: 'listInvoices',
  summary: 'Own invoices (paginated)',
  tag: 'Billing',
  scope: 'read:billing',
  query: PageQuerySchema,
  responses: {
    200: { description: 'A page of the account\'s invoices, newest first.', schema: pageSchema(InvoiceSchema, 'InvoicePage'), headers: { Link: 'RFC 8288 links: first, prev, next, last.' } },
  },
  errors: [],
  passthrough: { answer: (upstream, { query }) => repaginate('/v1/billing/invoices', query, upstream.body) },
  async handler({ query, caller, deps, call }) {
    const page = await deps.backend.listInvoices(caller.customer, { page: query.page, perPage: query.per_page }, call);
    const { body, headers } = paginate('/v1/billing/invoices', query, page.items, page.total);
    return { status: 200, body, headers };
  },
});
