/**
 * Where events enter the outbox. Writes through the gateway emit at once; the change detector
 * observes what the backend shows. Both go through the snapshot: a resource's last known state is
 * swapped atomically, so a change seen by both a write and the detector is reported once.
 */
import type { FastifyBaseLogger } from 'fastify';
import { captureTraceHeaders, type TraceContext } from '../ops/trace.js';
import type { DeliveryLogEntry, WebhookOutbox, WebhookStore } from '../stores/types.js';
import type { Invoice, Order, Service } from '../v1/schemas.js';
import { DeliveryLog } from './delivery-log.js';
import { eventBody, type EventData, type EventType } from './events.js';
import { newEventId } from './signing.js';

/** Snapshot field that says the detector has taken its first look (before it, nothing is "new"). */
export const BASELINE_FIELD = '_baseline';

export type Observed = { kind: 'order'; resource: Order } | { kind: 'service'; resource: Service } | { kind: 'invoice'; resource: Invoice };

export class WebhookEvents {
  private readonly history: DeliveryLog;

  constructor(
    private readonly store: WebhookStore,
    private readonly outbox: WebhookOutbox,
    private readonly log: FastifyBaseLogger,
    /** Called after each enqueue (the local worker delivers at once). */
    private readonly onEnqueued: () => void = () => undefined,
    private readonly now: () => number = Date.now,
  ) {
    this.history = new DeliveryLog(store, log, now);
  }

  /**
   * Queues an event for the account's endpoint; nothing when none is set or it is disabled. The
   * trace of the request that caused it (a new one without a request) goes with it to every attempt.
   */
  async emit<T extends EventType>(accountId: string, type: T, data: EventData<T>, trace?: TraceContext): Promise<boolean> {
    const record = await this.store.get(accountId);
    if (!record || record.status === 'disabled') return false;
    const at = new Date(this.now());
    const entry = { eventId: newEventId(at.getTime()), accountId, body: eventBody(type, data, at), trace: captureTraceHeaders(trace) };
    await this.outbox.enqueue(entry);
    await this.history.queued(accountId, entry.eventId, entry.body);
    this.onEnqueued();
    return true;
  }

  /**
   * Queues a logged event again (an operator's replay): the same id and payload, so a receiver that
   * did get it once can tell, with the whole retry schedule ahead of it.
   */
  async replay(accountId: string, logged: DeliveryLogEntry): Promise<DeliveryLogEntry> {
    await this.outbox.enqueue({ eventId: logged.eventId, accountId, body: logged.body, trace: captureTraceHeaders(undefined) });
    const entry = await this.history.queued(accountId, logged.eventId, logged.body);
    this.onEnqueued();
    return entry;
  }

  /**
   * Records a resource's current state and emits what changed since the last one seen. `baseline`:
   * the first look at an account, which records without emitting (its history is not news);
   * `trace`: the request that caused the change, if one did.
   */
  async observe(accountId: string, observed: Observed, { baseline = false, trace }: { baseline?: boolean; trace?: TraceContext } = {}): Promise<void> {
    const state = observed.resource.status;
    const field = `${observed.kind}:${observed.resource.id}`;
    const previous = await this.store.swapSnapshot(accountId, field, state);
    if (baseline || previous === state) return;
    const events = changes(observed, previous);
    for (const [queued, [type, data]] of events.entries()) {
      try {
        await this.emit(accountId, type, data as never, trace);
      } catch (error) {
        // Not queued (emit fails before the outbox has it): the swap is undone so that the next
        // look sees the change again, or the event would be lost with the state recorded as seen.
        await this.undo(accountId, field, state, queued === 0 ? previous : PARTLY_REPORTED);
        throw error;
      }
    }
  }

  private async undo(accountId: string, field: string, state: string, previous: string | null): Promise<void> {
    try {
      await this.store.restoreSnapshot(accountId, field, state, previous);
    } catch (error) {
      this.log.error({ err: error, account_id: accountId, resource: field }, 'webhook event lost: neither queued nor its observation undone');
    }
  }

  /** For writes: emit, and never fail the request that caused the event (it is logged instead). */
  async safely(work: () => Promise<unknown>, accountId: string): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.log.error({ err: error, account_id: accountId }, 'webhook event could not be queued');
    }
  }
}

/**
 * The state put back when a change's first event was queued and the next was not. Only an invoice
 * first seen paid has two events (created, then paid); from any other known state the rest, paid,
 * is reported again, and created is not repeated.
 */
const PARTLY_REPORTED = 'unpaid';

/** The events one state change means. */
function changes(observed: Observed, previous: string | null): Array<[EventType, unknown]> {
  const { kind, resource } = observed;
  switch (kind) {
    case 'order':
      return [[previous === null ? 'order.created' : 'order.status_changed', resource]];
    case 'service':
      // A service is born pending with its order; first seen in another state, it has changed since.
      return previous === null && resource.status === 'pending' ? [] : [['service.status_changed', resource]];
    case 'invoice': {
      const events: Array<[EventType, unknown]> = previous === null ? [['invoice.created', resource]] : [];
      if (resource.status === 'paid') events.push(['invoice.paid', resource]);
      return events;
    }
  }
}
