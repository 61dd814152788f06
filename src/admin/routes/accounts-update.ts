import { z } from 'zod';
import { defineAdminEndpoint } from '../endpoint.js';
import { invalidBodyField } from '../problems.js';
import { AccountNameSchema, AccountPathSchema, accountView, AccountSchema, UpstreamIdSchema } from '../schemas.js';

const UpdateAccountSchema = z
  .strictObject({
    name: AccountNameSchema.optional(),
    upstream_id: UpstreamIdSchema.optional().meta({ description: "Another backend customer: the account's keys serve it from the next request." }),
  })
  .refine((changes) => changes.name !== undefined || changes.upstream_id !== undefined, 'name or upstream_id is required')
  // The refinement as the document can say it: the object is closed, so one property is name or upstream_id.
  .meta({ id: 'AdminAccountChanges', minProperties: 1 });

export default defineAdminEndpoint({
  method: 'PATCH',
  url: '/admin/v1/accounts/:id',
  operationId: 'updateAccount',
  summary: 'Change an account',
  description:
    'Renames the account or maps it to another backend customer, which it then holds instead of the one it leaves; fields left out stay. ' +
    'An `upstream_id` another account is mapped to answers 409 `upstream_id_taken`, naming that account in `held_by`, and nothing changes.',
  tag: 'Accounts',
  scope: 'admin:accounts',
  params: AccountPathSchema,
  body: UpdateAccountSchema,
  responses: { 200: { description: 'The account after the change.', schema: AccountSchema } },
  errors: ['not_found', 'upstream_id_taken'],
  async handler({ params, body, service }) {
    const problem = body.upstream_id === undefined ? undefined : service.upstreamIdProblem(body.upstream_id);
    if (problem) throw invalidBodyField('upstream_id', problem);
    const account = await service.updateAccount(params.id, {
      ...(body.name === undefined ? {} : { name: body.name }),
      ...(body.upstream_id === undefined ? {} : { upstreamId: body.upstream_id }),
    });
    return { status: 200, body: accountView(account) };
  },
});
