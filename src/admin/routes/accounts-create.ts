import { z } from 'zod';
import { defineAdminEndpoint } from '../endpoint.js';
import { invalidBodyField } from '../problems.js';
import { AccountIdSchema, AccountNameSchema, accountView, AccountSchema, UPSTREAM_ID_DESCRIPTION, UpstreamIdSchema } from '../schemas.js';

const CreateAccountSchema = z
  .strictObject({
    id: AccountIdSchema.meta({ description: 'The account id: stable, chosen by the panel (e.g. its own reseller id).' }),
    name: AccountNameSchema,
    upstream_id: UpstreamIdSchema.meta({ description: UPSTREAM_ID_DESCRIPTION }),
  })
  .meta({ id: 'AdminAccountInput' });

export default defineAdminEndpoint({
  method: 'POST',
  url: '/admin/v1/accounts',
  operationId: 'createAccount',
  summary: 'Create an account',
  description:
    'Maps a new account to one backend customer. An id that exists answers 409 `account_exists`, so a retry cannot make two; ' +
    'an `upstream_id` another account is mapped to answers 409 `upstream_id_taken`, naming that account in `held_by` (one customer, one account).',
  tag: 'Accounts',
  scope: 'admin:accounts',
  body: CreateAccountSchema,
  responses: { 201: { description: 'The account.', schema: AccountSchema, headers: { Location: 'The account\'s URL, `/admin/v1/accounts/{id}`.' } } },
  errors: ['account_exists', 'upstream_id_taken'],
  subject: ({ body }) => ({ accountId: body?.id }),
  async handler({ body, service }) {
    const problem = service.upstreamIdProblem(body.upstream_id);
    if (problem) throw invalidBodyField('upstream_id', problem);
    const account = await service.createAccount({ id: body.id, name: body.name, upstreamId: body.upstream_id });
    return { status: 201, body: accountView(account), headers: { location: `/admin/v1/accounts/${encodeURIComponent(account.id)}` } };
  },
});
