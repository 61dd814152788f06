import { z } from 'zod';
import { TimestampSchema } from '../../../v1/schemas.js';

export const WebhookConfigSchema = z
  .object({
    url: z.string().nullable(),
    updated_at: TimestampSchema.nullable(),
  })
  .meta({ id: 'WebhookConfig' });

export const WebhookSetResultSchema = z
  .object({
    url: z.string().nullable(),
    updated_at: TimestampSchema,
    secret: z.string().optional().meta({
      description: 'The signing secret, returned once when a URL is set; never shown again.',
    }),
  })
  .meta({ id: 'WebhookSetResult' });
