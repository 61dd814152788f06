import { pageSchema, paginate, PageQuerySchema } from '../../http/pagination.js';
import { defineAdminEndpoint } from '../endpoint.js';
import { accountView, AccountSchema } from '../schemas.js';

export default defineAdminEndpoint({
  method: 'GET',
  url: '/admin/v1/accounts',
  operationId: 'listAccounts',
  summary: 'List accounts',
  description: 'Oldest first, paginated (`page`, `per_page`), with a `Link` header.',
  tag: 'Accounts',
  scope: 'admin:read',
  query: PageQuerySchema,
  responses: { 200: { description: 'A page of accounts.', schema: pageSchema(AccountSchema, 'AdminAccountPage'), headers: { Link: 'RFC 8288 links to the first, previous, next and last pages.' } } },
  errors: [],
  async handler({ query, service }) {
    const accounts = await service.listAccounts();
    const start = (query.page - 1) * query.per_page;
    const page = paginate('/admin/v1/accounts', query, accounts.slice(start, start + query.per_page).map(accountView), accounts.length);
    return { status: 200, body: page.body, headers: page.headers };
  },
});
