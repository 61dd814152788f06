import type { KeyRateLimitOverrides } from '../../stores/types.js';
import { defineAdminEndpoint } from '../endpoint.js';
import { AccountPathSchema, IssuedKeySchema, issuedView, KeyInputSchema, keyIdFor } from '../schemas.js';

export default defineAdminEndpoint({
  method: 'POST',
  url: '/admin/v1/accounts/:id/keys',
  operationId: 'issueKey',
  summary: 'Issue a key',
  description:
    'Issues a v1 API key for the account. The answer holds the full key; only its hash is kept. ' +
    'A retry with the same Idempotency-Key (and body) answers the same key again and makes no second one; ' +
    'the stored answer is encrypted at rest.',
  tag: 'Keys',
  scope: 'admin:keys',
  params: AccountPathSchema,
  body: KeyInputSchema,
  idempotent: true,
  responses: { 201: { description: 'The key, with the full key once.', schema: IssuedKeySchema } },
  // key_inactive: a retry whose earlier attempt's key was revoked since (AdminService.issueKey).
  errors: ['not_found', 'key_inactive', 'account_disabled', 'idempotency_conflict', 'idempotency_in_progress', 'replay_stale'],
  subject: ({ answer }) => ({ newKeyId: (answer as { id: string } | undefined)?.id }),
  async handler({ params, body, service, recordId }) {
    const limits = body.rate_limits;
    const rateLimits: KeyRateLimitOverrides | null = limits
      ? {
          ...(limits.per_minute === undefined ? {} : { perMinute: limits.per_minute }),
          ...(limits.burst === undefined ? {} : { burst: limits.burst }),
          ...(limits.per_day === undefined ? {} : { perDay: limits.per_day }),
        }
      : null;
    const issued = await service.issueKey({
      accountId: params.id,
      name: body.name,
      scopes: body.scopes,
      expiresAt: body.expires_at ? new Date(body.expires_at).toISOString() : null,
      rateLimits,
      keyId: keyIdFor(recordId),
    });
    return { status: 201, body: issuedView(issued) };
  },
});
