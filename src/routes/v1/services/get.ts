import { defineEndpoint } from '../../../http/endpoint.js';
import { ServiceSchema } from '../../../v1/schemas.js';
import { IdParamsSchema } from '../params.js';

export default defineEndpoint({
  method: 'GET',
  url: '/v1/services/:id',
  operationId: 'getService',
  summary: 'Details of an own service',
  tag: 'Services',
  scope: 'read:services',
  params: IdParamsSchema,
  responses: { 200: { description: 'The service.', schema: ServiceSchema } },
  errors: ['not_found'],
  async handler({ params, caller, deps, call }) {
    return { status: 200, body: await deps.backend.getService(caller.customer, params.id, call) };
  },
});
