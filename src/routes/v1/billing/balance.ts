import { defineEndpoint } from '../../../http/endpoint.js';
import { BalanceSchema } from '../../../v1/schemas.js';

export default defineEndpoint({
  method: 'GET',
  url: '/v1/billing/balance',
  operationId: 'getBalance',
  summary: 'Credit balance',
  tag: 'Billing',
  scope: 'read:billing',
  responses: { 200: { description: 'The account\'s credit balance.', schema: BalanceSchema } },
  errors: [],
  async handler({ caller, deps, call }) {
    return { status: 200, body: await deps.backend.getBalance(caller.customer, call) };
  },
});
