import { defineAdminEndpoint } from '../endpoint.js';
import { AccountPathSchema, accountView, AccountSchema } from '../schemas.js';

export default defineAdminEndpoint({
  method: 'DELETE',
  url: '/admin/v1/accounts/:id',
  operationId: 'deleteAccount',
  summary: 'Delete an account',
  description:
    'Offboards a reseller: the account, every key of it, its webhook endpoint (with its secrets), delivery log and event counter are deleted, and its backend customer is free for another account. ' +
    'Its keys answer 401 from the next request, on every gateway instance; events still queued for it are dropped unsent and unlogged as they come due. ' +
    'Its id is not used again: creating an account under it answers 409 `account_exists` (its idempotency records, and the answers they replay, would reach the new holder). To keep the keys for later, disable the account instead.',
  tag: 'Accounts',
  scope: 'admin:accounts',
  params: AccountPathSchema,
  responses: { 200: { description: 'The account as it was when deleted.', schema: AccountSchema } },
  errors: ['not_found'],
  async handler({ params, service }) {
    return { status: 200, body: accountView(await service.deleteAccount(params.id)) };
  },
});
