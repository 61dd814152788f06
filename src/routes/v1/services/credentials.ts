import type { AuditRecord } from '../../../audit.js';
import { ApiError } from '../../../errors.js';
import { defineEndpoint } from '../../../http/endpoint.js';
import { toApiError } from '../../../http/problems.js';
import { CredentialsSchema, type Credentials } from '../../../v1/schemas.js';
import { IdParamsSchema } from '../params.js';

function outcomeOf(status: number): AuditRecord['outcome'] {
  if (status === 200) return 'returned';
  if (status === 404) return 'not_found';
  return 'failed';
}

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
  params: IdParamsSchema,
  responses: { 200: { description: 'The credentials.', schema: CredentialsSchema } },
  errors: ['not_found', 'store_unavailable'],
  async handler({ params, caller, services, requestId, ip, userAgent }) {
    let credentials: Credentials | undefined;
    let failure: unknown;
    try {
      credentials = await services.backend.getCredentials(caller.customer, params.id, { requestId });
    } catch (error) {
      failure = error;
    }
    const status = failure === undefined ? 200 : toApiError(failure).status;
    try {
      await services.audit.write({
        time: new Date().toISOString(),
        event: 'credentials.read',
        request_id: requestId,
        key_id: caller.key.id,
        account_id: caller.account.id,
        service_id: params.id,
        source_ip: ip,
        user_agent: userAgent.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 200),
        fields: credentials ? Object.keys(credentials) : [],
        outcome: outcomeOf(status),
        status,
      });
    } catch (error) {
      throw new ApiError('store_unavailable', 'The credentials read could not be audited, so nothing is returned.', {
        headers: { 'retry-after': '5' },
        cause: error,
      });
    }
    if (failure !== undefined) throw failure;
    return { status: 200, body: credentials, headers: { 'cache-control': 'no-store', pragma: 'no-cache' } };
  },
});
