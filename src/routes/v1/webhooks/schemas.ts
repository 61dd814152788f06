import { z } from 'zod';
import type { WebhookRecord } from '../../../stores/webhook-types.js';
import { TimestampSchema } from '../../../v1/schemas.js';

const LastDeliverySchema = z
  .object({
    at: TimestampSchema,
    http_status: z.number().int().nullable().meta({ description: 'null when the receiver did not answer (refused, unreachable, timed out).' }),
    attempts: z.number().int().meta({ description: 'Attempts made for that event so far.' }),
  })
  .meta({ id: 'WebhookLastDelivery' });

export const WebhookConfigSchema = z
  .object({
    url: z.string().nullable().meta({ example: 'https://hooks.example.com/reseller' }),
    updated_at: TimestampSchema.nullable(),
    status: z.enum(['enabled', 'disabled']).nullable().meta({
      description: '`disabled` after a 410 answer or 5 days of failed deliveries; setting the URL again enables it. null when no URL is set.',
    }),
    disabled_reason: z.enum(['gone', 'failing']).nullable().meta({ example: null, description: 'Why the endpoint is disabled. `gone`: the endpoint answered `410 Gone`; `failing`: every delivery failed for 5 days. null while enabled.' }),
    last_delivery: LastDeliverySchema.nullable(),
    failing_since: TimestampSchema.nullable().meta({ description: 'Start of the current run of failed deliveries; null when the last one succeeded.' }),
  })
  .meta({ id: 'WebhookConfig' });

export const WebhookSetResultSchema = WebhookConfigSchema.extend({
  updated_at: TimestampSchema,
  secret: z.string().optional().meta({
    description: 'The signing secret (`whsec_…`), returned once: when a URL is first set or the secret is rotated.',
  }),
}).meta({ id: 'WebhookSetResult' });

/** What GET and PUT show of a record; never its secrets. */
export function webhookView(record: WebhookRecord | null) {
  return {
    url: record?.url ?? null,
    updated_at: record?.updatedAt ?? null,
    status: record?.status ?? null,
    disabled_reason: record?.disabledReason ?? null,
    last_delivery: record?.lastDelivery
      ? { at: record.lastDelivery.at, http_status: record.lastDelivery.httpStatus, attempts: record.lastDelivery.attempts }
      : null,
    failing_since: record?.failingSince ?? null,
  };
}
