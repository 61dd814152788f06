/**
 * Where events enter the outbox. Writes through the gateway emit at once; the change detector
 * observes what the backend shows. Both go through the snapshot, a resource's last reported state:
 * a change's events are queued before the state is recorded, so a crash in between repeats the
 * change at the next look (at least once) rather than losing it.
 */
import type { FastifyBaseLogger } from 'fastify';
import { captureTraceHeaders, type TraceContext } from '../ops/trace.js';
import type { DeliveryLogEntry, SnapshotEntry, WebhookOutbox, WebhookStore } from '../stores/webhook-types.js';
import type { Invoice, Order, Service } from '../v1/schemas.js';
import { createRepeatedLog, type RepeatedLog } from '../repeated-log.js';
import { DeliveryLog, described } from './delivery-log.js';
import { eventBody, type EventData, type EventType } from './events.js';
import { HeldEvents, type HeldEntry, type HeldEventsOptions } from './held-events.js';
import { changeEventId, newEventId, newSnapshotTag, snapshotTagTime } from './signing.js';

/** Snapshot field that says the detector has taken its first look (before it, nothing is "new"). */
export const BASELINE_FIELD = '_baseline';

export type Observed = { kind: 'order'; resource: Order } | { kind: 'service'; resource: Service } | { kind: 'invoice'; resource: Invoice };

export class WebhookEvents {
  private readonly history: DeliveryLog;
  private readonly held: HeldEvents;
  /** Events a full line refuses come in floods: the first logged, the rest counted. */
  private readonly repeats: RepeatedLog;
  private readonly onLost: HeldEventsOptions['onLost'];

  constructor(
    private readonly store: WebhookStore,
    private readonly outbox: WebhookOutbox,
    private readonly log: FastifyBaseLogger,
    /** Called after each enqueue (the local worker delivers at once). */
    private readonly onEnqueued: () => void = () => undefined,
    private readonly now: () => number = Date.now,
    /** How events of writes that the stores refused are held and retried (tests shorten it); `onLost` hears every event lost. */
    held: Omit<HeldEventsOptions, 'queue' | 'log'> = {},
  ) {
    this.history = new DeliveryLog(store, log, now);
    this.held = new HeldEvents({ ...held, queue: (entry) => this.queue(entry), log });
    this.repeats = createRepeatedLog(log);
    this.onLost = held.onLost;
  }

  /**
   * For writes: the event of a request that was carried out. It must not fail the request, and it
   * has no other source, so when the stores refuse it, it is held and queued again once they take
   * it (HeldEvents).
   */
  async emitForWrite<T extends EventType>(accountId: string, type: T, data: EventData<T>, trace?: TraceContext): Promise<void> {
    const entry = this.entryOf(accountId, type, data, trace);
    if (this.held.size > 0) return this.held.queueBehind(entry);
    try {
      await this.queue(entry);
    } catch (error) {
      this.held.hold(entry, error);
    }
  }

  /** How many events are held for the stores. */
  get heldCount(): number {
    return this.held.size;
  }

  /** One last attempt at what is held (logged as lost if the stores still refuse it). */
  async close(): Promise<void> {
    await this.held.close();
    this.repeats.flush();
  }

  /**
   * The event as queued: the trace of the request that caused it (a new one without a request) goes
   * with it to every attempt. `eventId`: a change's, from its snapshot entry; else a new one.
   */
  private entryOf<T extends EventType>(accountId: string, type: T, data: EventData<T>, trace: TraceContext | undefined, eventId?: string): HeldEntry {
    const at = new Date(this.now());
    const id = eventId ?? newEventId(at.getTime());
    return { eventId: id, accountId, body: eventBody(id, type, data, at), trace: captureTraceHeaders(trace) };
  }

  /** Queues an event for the account's endpoint; nothing when none is set, it is disabled, or the event waits already. */
  private async queue(entry: HeldEntry): Promise<void> {
    const record = await this.store.get(entry.accountId);
    if (!record || record.status === 'disabled') return;
    // Numbered as it is queued: the number is logged with it, and a replay keeps it.
    const queued = await this.outbox.enqueue({ ...entry, numbered: true });
    if (queued.outcome === 'already_waiting') return;
    if (queued.outcome === 'full') return this.refused({ ...entry, body: queued.body });
    await this.history.queued(entry.accountId, entry.eventId, queued.body);
    this.onEnqueued();
  }

  /**
   * Not kept: its account's line is full (a receiver that hangs or crawls). Counted, logged, and
   * listed as dropped with its number (the receiver sees the gap), to replay.
   */
  private async refused(entry: HeldEntry): Promise<void> {
    this.onLost?.('backlog_full');
    const detail = { event_id: entry.eventId, event_type: described(entry.body).type };
    this.repeats.note('error', 'webhook event lost: its account has the most events waiting already', { account_id: entry.accountId, reason: 'backlog_full' }, detail);
    await this.history.ended({ ...entry, attempts: 0 }, 'dropped', 'not queued: too many events waiting for this endpoint');
  }

  /**
   * Queues a logged event again (an operator's replay): the same id and payload (its sequence
   * number too, none taken), so a receiver that did get it once can tell, with the whole retry
   * schedule ahead of it. Null when its account's
   * line is full: nothing queued.
   */
  async replay(accountId: string, logged: DeliveryLogEntry): Promise<DeliveryLogEntry | null> {
    const queued = await this.outbox.enqueue({ eventId: logged.eventId, accountId, body: logged.body, trace: captureTraceHeaders(undefined) });
    if (queued.outcome === 'full') return null;
    const entry = await this.history.queued(accountId, logged.eventId, logged.body);
    this.onEnqueued();
    return entry;
  }

  /**
   * Makes the detector's next look at the account a baseline again (it records, reports nothing):
   * for an endpoint coming back after it was disabled or unset. What changed meanwhile is not news
   * to it: events of a disabled period are not queued for later (W9).
   */
  async rebaseline(accountId: string): Promise<void> {
    const mark = await this.store.readSnapshotState(accountId, BASELINE_FIELD);
    // Only the detector writes a mark, and only over the one it read: a refused removal cannot leave one behind.
    if (mark !== null) await this.store.recordSnapshot(accountId, BASELINE_FIELD, mark.state, null);
  }

  /**
   * Emits what changed since the last state recorded for a resource, then records the current one.
   * `baseline`: the first look at an account, which records without emitting (its history is not
   * news); `trace`: the request that caused the change, if one did; `readAt`: when the resource was
   * read, by the store's clock for the detector's reads (snapshot stamps come from it, whichever
   * instance records; a write's own read is timed by its instance, which saves a round trip on the
   * write's path), so that a state a write recorded after that read is not taken back by it:
   * reported as a change, then changed back by the next pass; `knownOnly`: a
   * write that cannot tell whether it changed the status (a reboot) reports and records only from a
   * recorded state: a resource no look has recorded is left to the detector, which judges it as it
   * would have (a baseline's history, or a new service's first state); `reportFrom`: with
   * `baseline`, when the endpoint began to report: a change from a state recorded since (a write's,
   * made after it was set) is news all the same. Says whether a change was recorded.
   */
  async observe(
    accountId: string,
    observed: Observed,
    { baseline = false, trace, readAt, knownOnly = false, reportFrom }: { baseline?: boolean; trace?: TraceContext; readAt?: number; knownOnly?: boolean; reportFrom?: number } = {},
  ): Promise<boolean> {
    const state = observed.resource.status;
    const field = `${observed.kind}:${observed.resource.id}`;
    const previous = await this.store.readSnapshotState(accountId, field);
    const from = previous?.state ?? null;
    if (from === state) return false;
    if (knownOnly && previous === null) return false;
    if (readAt !== undefined && previous !== null && (snapshotTagTime(previous.tag) ?? -Infinity) > readAt) return false;
    const quiet = baseline && !(reportFrom !== undefined && recordedSince(previous, reportFrom));
    for (const { type, data, reportedFrom } of quiet ? [] : changes(observed, from)) {
      try {
        // Its id is the change's: whoever reports it again (a write and the detector at once, a
        // pass after a crash between queueing and recording) reports it under the same id.
        await this.queue(this.entryOf(accountId, type, data as never, trace, changeEventId(accountId, field, previous, type, state)));
      } catch (error) {
        // Not queued: the state stays unrecorded so that the next look reports the change again,
        // from after the events already queued (an invoice's created, when its paid failed).
        if (reportedFrom !== null && reportedFrom !== from) await this.record(accountId, field, from, reportedFrom);
        throw error;
      }
    }
    // Only if nobody recorded another state meanwhile: that observer reports from there. A new tag
    // gives the next change of this resource ids of its own.
    return this.store.recordSnapshot(accountId, field, from, state, newSnapshotTag(), true);
  }


  /**
   * For writes: observes an order the write may have changed without returning it (a service
   * action's), read only when a state of it is recorded: one from before the baseline, or of an
   * account the detector does not watch, is neither read upstream nor reported as created.
   */
  async observeKnownOrder(accountId: string, id: string, read: () => Promise<Order>, trace?: TraceContext): Promise<void> {
    const known = await this.store.readSnapshotState(accountId, `order:${id}`);
    // The detector's own marks (`_unread`) start with "_": no status to report a change from.
    if (known === null || known.state.startsWith('_')) return;
    await this.observe(accountId, { kind: 'order', resource: await read() }, { trace });
  }

  private async record(accountId: string, field: string, expected: string | null, state: string): Promise<void> {
    try {
      await this.store.recordSnapshot(accountId, field, expected, state, newSnapshotTag(), true);
    } catch (error) {
      this.log.warn({ err: error, account_id: accountId, resource: field }, 'webhook events queued but not recorded; the next look reports them again');
    }
  }

  /**
   * For writes: observe, and never fail the request that caused it (logged instead; a change whose
   * state was not recorded is reported by the detector's next look).
   */
  async safely(work: () => Promise<unknown>, accountId: string): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.log.error({ err: error, account_id: accountId }, 'webhook event could not be queued; its change is reported at the next look');
    }
  }
}

/**
 * Whether a snapshot entry was recorded after `at` (ms; in the same ms is not provably after);
 * entries without a time in their tag were not.
 */
export function recordedSince(entry: SnapshotEntry | null, at: number): boolean {
  return entry !== null && (snapshotTagTime(entry.tag) ?? -Infinity) > at;
}

/** One event of a change, and the snapshot state from which it (and those after it) would be reported again. */
interface Change {
  type: EventType;
  data: unknown;
  reportedFrom: string | null;
}

/** The events one state change means. */
function changes(observed: Observed, previous: string | null): Change[] {
  const { kind, resource } = observed;
  switch (kind) {
    case 'order':
      return [{ type: previous === null ? 'order.created' : 'order.status_changed', data: resource, reportedFrom: previous }];
    case 'service':
      // A service is born pending with its order; first seen in another state, it has changed since.
      return previous === null && resource.status === 'pending' ? [] : [{ type: 'service.status_changed', data: resource, reportedFrom: previous }];
    case 'invoice': {
      const events: Change[] = previous === null ? [{ type: 'invoice.created', data: resource, reportedFrom: null }] : [];
      // After created, from any known state other than paid: paid is reported again, created is not.
      if (resource.status === 'paid') events.push({ type: 'invoice.paid', data: resource, reportedFrom: previous ?? 'unpaid' });
      return events;
    }
  }
}
