import { defineAdminEndpoint } from '../endpoint.js';
import { AccountPathSchema, accountView, AccountSchema } from '../schemas.js';

export default defineAdminEndpoint({
  method: 'POST',
  url: '/admin/v1/accounts/:id/disable',
  operationId: 'disableAccount',
  summary: 'Disable an account',
  description:
    'Every key of the account answers 401 from the next request, on every gateway instance; no key can be issued or rotated for it. ' +
    'The keys are kept: enabling the account lets them work again. Disabling a disabled account changes nothing.',
  tag: 'Accounts',
  scope: 'admin:accounts',
  params: AccountPathSchema,
  responses: { 200: { description: 'The disabled account.', schema: AccountSchema } },
  errors: ['not_found'],
  async handler({ params, service }) {
    return { status: 200, body: accountView(await service.setAccountDisabled(params.id, true)) };
  },
});
