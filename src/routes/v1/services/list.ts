import { defineEndpoint } from '../../../http/endpoint.js';
import { PageQuerySchema, pageSchema, paginate, repaginate } from '../../../http/pagination.js';
import { ServiceSchema } from '../../../v1/schemas.js';

export default defineEndpoint({
  method: 'GET',
  url: '/v1/services',
  operationId: 'listServices',
  summary: 'Own services (paginated)',
  tag: 'Services',
  scope: 'read:services',
  query: PageQuerySchema,
  responses: {
    200: { description: 'A page of the account\'s services, oldest first (by id).', schema: pageSchema(ServiceSchema, 'ServicePage'), headers: { Link: 'RFC 8288 links: first, prev, next, last.' } },
  },
  errors: [],
  passthrough: { answer: (upstream, { query }) => repaginate('/v1/services', query, upstream.body) },
  async handler({ query, caller, deps, call }) {
    const page = await deps.backend.listServices(caller.customer, { page: query.page, perPage: query.per_page }, call);
    const { body, headers } = paginate('/v1/services', query, page.items, page.total);
    return { status: 200, body, headers };
  },
});
