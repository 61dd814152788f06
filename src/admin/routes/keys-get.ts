import { defineAdminEndpoint } from '../endpoint.js';
import { KeyPathSchema, KeySchema, keyView } from '../schemas.js';

export default defineAdminEndpoint({
  method: 'GET',
  url: '/admin/v1/keys/:id',
  operationId: 'getKey',
  summary: 'Read a key',
  description: 'The key as stored: account, scopes, dates, limits. Never the key or its hash.',
  tag: 'Keys',
  scope: 'admin:read',
  params: KeyPathSchema,
  responses: { 200: { description: 'The key.', schema: KeySchema } },
  errors: ['not_found'],
  subject: ({ answer }) => ({ accountId: (answer as { account_id: string } | undefined)?.account_id }),
  async handler({ params, service }) {
    return { status: 200, body: keyView(await service.key(params.id)) };
  },
});
