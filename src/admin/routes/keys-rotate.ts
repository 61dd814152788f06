import { z } from 'zod';
import { defineAdminEndpoint } from '../endpoint.js';
import { MAX_GRACE_SECONDS } from '../service.js';
import { IssuedKeySchema, issuedView, keyIdFor, KeyPathSchema, KeySchema, keyView } from '../schemas.js';

const RotateSchema = z
  .strictObject({
    grace_seconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_GRACE_SECONDS)
      .default(0)
      .meta({ description: 'How long the old key keeps working (default 0: it stops now; at most 30 days).' }),
  })
  .meta({ id: 'AdminRotateInput' });

const RotatedSchema = z.object({ old: KeySchema, new: IssuedKeySchema }).meta({ id: 'AdminRotatedKey' });

export default defineAdminEndpoint({
  method: 'POST',
  url: '/admin/v1/keys/:id/rotate',
  operationId: 'rotateKey',
  summary: 'Rotate a key',
  description:
    'Issues a successor with the same account, name, scopes, expiry and limits; the old key works for `grace_seconds` more. ' +
    'A revoked or expired key cannot be rotated (409 `key_inactive`); rotating a key already in a grace period keeps its earlier end. ' +
    'Idempotent as issuing is: a retry answers the same successor.',
  tag: 'Keys',
  scope: 'admin:keys',
  params: KeyPathSchema,
  body: RotateSchema,
  idempotent: true,
  responses: { 201: { description: 'The old key (with its end) and the successor, with the full key once.', schema: RotatedSchema } },
  errors: ['not_found', 'key_inactive', 'account_disabled', 'idempotency_conflict', 'idempotency_in_progress', 'replay_stale'],
  subject: ({ answer }) => {
    const successor = (answer as { new: { id: string; account_id: string } } | undefined)?.new;
    return { accountId: successor?.account_id, newKeyId: successor?.id };
  },
  async handler({ params, body, service, recordId }) {
    const rotated = await service.rotateKey(params.id, body.grace_seconds * 1000, keyIdFor(recordId));
    return { status: 201, body: { old: keyView(rotated.old), new: issuedView(rotated) } };
  },
});
