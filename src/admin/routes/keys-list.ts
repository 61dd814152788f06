import { pageSchema, paginate, PageQuerySchema } from '../../http/pagination.js';
import { defineAdminEndpoint } from '../endpoint.js';
import { AccountPathSchema, KeySchema, keyView } from '../schemas.js';

export default defineAdminEndpoint({
  method: 'GET',
  url: '/admin/v1/accounts/:id/keys',
  operationId: 'listKeys',
  summary: "List an account's keys",
  description: 'Oldest first, paginated; revoked and expired keys included. Never a key or its hash.',
  tag: 'Keys',
  scope: 'admin:read',
  params: AccountPathSchema,
  query: PageQuerySchema,
  responses: { 200: { description: 'A page of keys.', schema: pageSchema(KeySchema, 'AdminKeyPage'), headers: { Link: 'RFC 8288 links to the first, previous, next and last pages.' } } },
  errors: ['not_found'],
  async handler({ params, query, service }) {
    const keys = await service.listKeys(params.id);
    const start = (query.page - 1) * query.per_page;
    const now = Date.now();
    const path = `/admin/v1/accounts/${encodeURIComponent(params.id)}/keys`;
    const page = paginate(path, query, keys.slice(start, start + query.per_page).map((key) => keyView(key, now)), keys.length);
    return { status: 200, body: page.body, headers: page.headers };
  },
});
