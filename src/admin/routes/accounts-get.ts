import { defineAdminEndpoint } from '../endpoint.js';
import { AccountPathSchema, accountView, AccountSchema } from '../schemas.js';

export default defineAdminEndpoint({
  method: 'GET',
  url: '/admin/v1/accounts/:id',
  operationId: 'getAccount',
  summary: 'Read an account',
  tag: 'Accounts',
  scope: 'admin:read',
  params: AccountPathSchema,
  responses: { 200: { description: 'The account.', schema: AccountSchema } },
  errors: ['not_found'],
  async handler({ params, service }) {
    return { status: 200, body: accountView(await service.account(params.id)) };
  },
});
