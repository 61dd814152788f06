import { defineEndpoint } from '../../../http/endpoint.js';
import { CredentialsSchema } from '../../../v1/schemas.js';
import { IdParamsSchema } from '../params.js';

/** Never kept by a cache, HTTP/1.0 ones included: the gateway's own answer and a passthrough's alike. */
const CREDENTIALS_HEADERS = { 'cache-control': 'no-store', pragma: 'no-cache' };

export default defineEndpoint({
  method: 'GET',
  url: '/v1/services/:id/credentials',
  operationId: 'getServiceCredentials',
  summary: 'Access credentials of an own service',
  description:
    'Separate scope `read:credentials`. Every call, whatever its outcome, is written to the audit log before the answer leaves; ' +
    'if the audit record cannot be written, the credentials are not returned (503). Responses carry `Cache-Control: no-store`.',
  tag: 'Services',
  scope: 'read:credentials',
  // The pipeline audits every request routed here, failures before this handler included.
  audited: true,
  params: IdParamsSchema,
  responses: { 200: { description: 'The credentials.', schema: CredentialsSchema, headers: { Pragma: '`no-cache`, for HTTP/1.0 caches (beside `Cache-Control: no-store`).' } } },
  errors: ['not_found', 'store_unavailable'],
  // Also what the v1 passthrough sends with the upstream's credentials (its answers' headers are made here).
  answerHeaders: () => ({ ...CREDENTIALS_HEADERS }),
  async handler({ params, caller, deps, call }) {
    const credentials = await deps.backend.getCredentials(caller.customer, params.id, call);
    return { status: 200, body: credentials, headers: { ...CREDENTIALS_HEADERS } };
  },
});
