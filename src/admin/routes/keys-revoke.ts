import { defineAdminEndpoint } from '../endpoint.js';
import { KeyPathSchema, KeySchema, keyView } from '../schemas.js';

export default defineAdminEndpoint({
  method: 'POST',
  url: '/admin/v1/keys/:id/revoke',
  operationId: 'revokeKey',
  summary: 'Revoke a key',
  description: 'The key answers 401 from the next request, on every gateway instance. Revoking a revoked key keeps its time.',
  tag: 'Keys',
  scope: 'admin:keys',
  params: KeyPathSchema,
  responses: { 200: { description: 'The revoked key.', schema: KeySchema } },
  errors: ['not_found'],
  subject: ({ answer }) => ({ accountId: (answer as { account_id: string } | undefined)?.account_id }),
  async handler({ params, service }) {
    return { status: 200, body: keyView(await service.revokeKey(params.id)) };
  },
});
