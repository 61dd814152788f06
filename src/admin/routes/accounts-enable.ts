import { defineAdminEndpoint } from '../endpoint.js';
import { AccountPathSchema, accountView, AccountSchema } from '../schemas.js';

export default defineAdminEndpoint({
  method: 'POST',
  url: '/admin/v1/accounts/:id/enable',
  operationId: 'enableAccount',
  summary: 'Enable a disabled account',
  description: "The account's keys that are neither revoked nor expired work again, from the next request.",
  tag: 'Accounts',
  scope: 'admin:accounts',
  params: AccountPathSchema,
  responses: { 200: { description: 'The enabled account.', schema: AccountSchema } },
  errors: ['not_found'],
  async handler({ params, service }) {
    return { status: 200, body: accountView(await service.setAccountDisabled(params.id, false)) };
  },
});
