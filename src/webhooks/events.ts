/**
 * The webhook event types and their payloads: `{ id, api_version, type, timestamp, data, sequence }`,
 * `id` being the event id (the `webhook-id` header's value), `data` the v1 resource exactly as the
 * matching GET returns it and `sequence` the account's event number, which the outbox adds as it
 * queues the event (src/stores/event-sequence.ts). The schemas also feed the OpenAPI `webhooks`.
 */
import { z } from 'zod';
import { ActionResultSchema, IdSchema, InvoiceSchema, OrderSchema, ServiceSchema, TimestampSchema } from '../v1/schemas.js';

const ActionFailureSchema = z
  .object({
    service_id: IdSchema,
    action: z.string(),
    /** The Problem the action's request was answered with. */
    status: z.number().int(),
    reason: z.string(),
    detail: z.string(),
  })
  .meta({ id: 'ServiceActionFailure' });

const WebhookTestSchema = z
  .object({ url: z.string().meta({ description: 'The URL that was set.' }) })
  .meta({ id: 'WebhookTest' });

export const EVENT_DATA = {
  'order.created': { schema: OrderSchema, summary: 'An order was placed (through the gateway or in the billing system).' },
  'order.status_changed': { schema: OrderSchema, summary: "An order's status changed (for example pending → active)." },
  'service.status_changed': { schema: ServiceSchema, summary: "A service's status changed (for example pending → active, active → suspended)." },
  'service.action.succeeded': { schema: ActionResultSchema, summary: 'A service action run through the gateway succeeded; `data` is the action result.' },
  'service.action.failed': { schema: ActionFailureSchema, summary: 'A service action run through the gateway failed; `data` says how it was answered.' },
  'invoice.created': { schema: InvoiceSchema, summary: 'An invoice was issued.' },
  'invoice.paid': { schema: InvoiceSchema, summary: 'An invoice was paid in full.' },
  'webhook.test': { schema: WebhookTestSchema, summary: 'Sent when a webhook URL is set, to check that it receives and verifies events.' },
} as const;

export type EventType = keyof typeof EVENT_DATA;
export const EVENT_TYPES = Object.keys(EVENT_DATA) as EventType[];
export type EventData<T extends EventType> = z.infer<(typeof EVENT_DATA)[T]['schema']>;

/** The payload format's version (reference W3): a receiver can tell a later format apart. */
export const EVENT_API_VERSION = 'v1';

/** The payload schema of one event type (for the OpenAPI document). */
export function eventPayloadSchema(type: EventType): z.ZodType {
  return z
    .object({
      id: z.string().meta({ description: 'The event id (`evt_…`), as in the `webhook-id` header: the same on every retry.' }),
      api_version: z.literal(EVENT_API_VERSION).meta({ description: 'The payload format: `v1`.' }),
      type: z.literal(type),
      timestamp: TimestampSchema.meta({ description: 'When the gateway noticed the event (RFC 3339).' }),
      data: EVENT_DATA[type].schema,
      sequence: z
        .number()
        .int()
        .min(1)
        .optional()
        .meta({
          description:
            "The event's number among the account's events, from 1, one more for each event queued (the same on every retry and replay): a number skipped is an event still on its way (retried, or waiting its turn) or one you will not get (dropped or failed: the operator can replay it), and numbers put events that came out of order back in order. Absent from events queued by a gateway release without it.",
        }),
    })
    .meta({ id: `Event_${type.replace(/\./g, '_')}` });
}

/** The body, as signed and sent but for its `sequence` (added as it is queued); `eventId` is the one its `webhook-id` header carries. */
export function eventBody<T extends EventType>(eventId: string, type: T, data: EventData<T>, at: Date): string {
  return JSON.stringify({ id: eventId, api_version: EVENT_API_VERSION, type, timestamp: at.toISOString(), data });
}
