/**
 * The change detector: the billing systems cannot push, so one instance at a time (a lease in the
 * store) reads each webhook account's services, invoices and open orders through the Backend
 * interface and reports what changed against the snapshot. The snapshot lives in the store, so a
 * restart neither repeats nor misses a change.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { BackendError, type Backend, type Customer } from '../backend/backend.js';
import { isDisabled } from '../keys/key-service.js';
import { createRepeatedLog, type RepeatedLog } from '../repeated-log.js';
import type { AccountRecord, KeyStore } from '../stores/types.js';
import type { WebhookRecord, WebhookStore } from '../stores/webhook-types.js';
import type { PageResult, Service } from '../v1/schemas.js';
import { BASELINE_FIELD, recordedSince, type WebhookEvents } from './emitter.js';

const LEASE = 'webhook-change-detector';
const PER_PAGE = 100;
/**
 * Far above any reseller's services or invoices (100 000): a pass gives up on the account there, so
 * an upstream whose pages never end (a total it never reaches, a page parameter ignored) cannot
 * hold the detector and its memory for good.
 */
const MOST_PAGES = 1_000;
/**
 * Bounds one pass's order reads per account (upstream load). Services and invoices are read whole:
 * a change is seen only by reading the resource, and WHMCS lists services oldest first, so a page
 * bound left an account's newest services unseen for good.
 */
const MAX_ORDER_READS = 50;
/** Snapshot state of an order the baseline found but had no read left for. */
const UNREAD_ORDER = '_unread';
/** Order states read every pass (in turn); the others only when one of their services changes. */
const OPEN_ORDER: ReadonlySet<string> = new Set(['pending', 'other']);

export interface ChangeDetectorOptions {
  backend: Backend;
  keys: KeyStore;
  store: WebhookStore;
  events: WebhookEvents;
  pollIntervalMs: number;
  log: FastifyBaseLogger;
}

/** What the failures of one cause share, whichever account met it: the upstream's words, or the error's. */
function failureKind(error: unknown): Record<string, unknown> {
  if (error instanceof BackendError) return { backend_error: error.kind, upstream: error.operatorMessage };
  return { error: error instanceof Error ? error.message : String(error) };
}

/**
 * A baseline mark is taken for a customer, and since the account was last enabled again. A
 * customer's history before the account mapped to it is no news (an upstream_id change), nor is what
 * changed while the account was disabled (reference W9), even when it was disabled and enabled
 * again between two passes, so that no pass saw it disabled. The mark's tag is the upstream id
 * alone, as the previous release compares it (any other tag is another customer's to it: a baseline
 * pass, then the plain id written back, at every hand-over of the detector's lease in a mixed fleet);
 * the enabling goes in the mark's state after its time, which nothing but this reads.
 */
function markState(account: AccountRecord, at: Date): string {
  return account.enabledAt ? `${at.toISOString()} enabled ${account.enabledAt}` : at.toISOString();
}

/** Whether a mark's state was taken since the account's last enabling (any mark, for one never disabled). */
function markSinceEnabled(account: AccountRecord, state: string | null): boolean {
  return !account.enabledAt || (state ?? '').endsWith(` enabled ${account.enabledAt}`);
}

/**
 * Since when (ms) the account's changes are news to its endpoint: since it was set or enabled again,
 * and since the account was enabled again. Undefined for an endpoint with no such time (a record of
 * the previous release): its baseline reports nothing.
 */
function reportingSince(record: WebhookRecord, account: AccountRecord): number | undefined {
  if (record.reportFrom === null) return undefined;
  return Math.max(Date.parse(record.reportFrom), account.enabledAt ? Date.parse(account.enabledAt) : -Infinity);
}

export class ChangeDetector {
  private readonly holder = `detector-${randomUUID()}`;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  /** Per account, the last open order read: the next pass goes on after it. */
  private readonly lastOpenRead = new Map<string, string>();
  /** An upstream outage fails every account of a pass alike: once, then counted. */
  private readonly repeats: RepeatedLog;

  constructor(private readonly options: ChangeDetectorOptions) {
    this.repeats = createRepeatedLog(options.log);
  }

  start(): void {
    this.timer = setInterval(() => {
      this.running ??= this.tick().finally(() => (this.running = undefined));
    }, this.options.pollIntervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
    this.repeats.flush();
    // Another instance takes over at its next tick, not after the lease has run out (a rolling
    // deploy would pause detection for up to two intervals at every instance it stops).
    await this.options.store.releaseLease(LEASE, this.holder).catch((error: unknown) => {
      this.options.log.warn({ err: error }, 'webhook change detector: lease not given up at stop; another instance takes it when it runs out');
    });
  }

  /**
   * One pass over every enabled account with an enabled endpoint, when this instance holds the
   * lease. A disabled account is not read (its keys refused, its endpoint may be the one a leaked key
   * set), and its baseline mark is dropped: once enabled, its first pass records what changed
   * meanwhile without reporting it, as for an endpoint enabled again (reference W9).
   */
  async tick(): Promise<void> {
    const { store, keys, log, pollIntervalMs } = this.options;
    try {
      // The lease outlives two intervals, so a holder that dies is replaced within about three. It is
      // renewed before each account: a pass longer than the lease (a slow upstream, many accounts)
      // stops once another instance has taken it, rather than scanning beside it.
      const hold = () => store.holdLease(LEASE, this.holder, pollIntervalMs * 2 + 1_000);
      if (!(await hold())) return;
      for (const account of await keys.listAccounts()) {
        if (this.stopped || !(await hold())) return;
        if (isDisabled(account)) {
          await this.options.events.rebaseline(account.id);
          continue;
        }
        const record = await store.get(account.id);
        if (!record || record.status === 'disabled') continue;
        await this.scan({ accountId: account.id, upstreamId: account.upstreamId }, account, record).catch((error: unknown) => {
          this.repeats.note('warn', 'webhook change detection failed for an account; next pass retries', failureKind(error), { err: error, account_id: account.id });
        });
      }
    } catch (error) {
      log.warn({ err: error }, 'webhook change detection pass failed; next pass retries');
    }
  }

  private async scan(customer: Customer, account: AccountRecord, record: WebhookRecord): Promise<void> {
    const { backend, store, events } = this.options;
    const ctx = { requestId: `webhook-detector-${randomUUID()}` };
    const snapshot = await store.readSnapshot(customer.accountId);
    // The mark names what it was taken for (no customer on marks from before, see markState): an
    // account mapped to another customer since, or enabled again since, starts from a new baseline.
    const mark = await store.readSnapshotState(customer.accountId, BASELINE_FIELD);
    const remapped = mark !== null && mark.tag !== '' && mark.tag !== customer.upstreamId;
    const baseline = mark === null || remapped || !markSinceEnabled(account, mark.state);
    // A baseline still reports the changes from states the gateway's writes recorded since the
    // endpoint began to report (an order placed right after the endpoint was set); after a remap,
    // none: what was recorded since may be the other customer's.
    const reportFrom = baseline && !remapped ? reportingSince(record, account) : undefined;
    const since = async (field: string) => reportFrom !== undefined && recordedSince(await store.readSnapshotState(customer.accountId, field), reportFrom);

    // A service list the backend refuses (FOSSBilling past its rows bound) must not leave the
    // account's invoices and known orders unwatched: the pass goes on without it, and fails after.
    let servicesFailure: unknown = null;
    // Read times by the store's clock, which stamped what the writes recorded (instances' clocks may disagree).
    const servicesReadAt = await store.clock(customer.accountId);
    const services = await readAll((page) => backend.listServices(customer, page, ctx)).catch((error: unknown) => {
      if (baseline) throw error;
      servicesFailure = error;
      return [] as Service[];
    });
    const invoicesReadAt = await store.clock(customer.accountId);
    const invoices = await readAll((page) => backend.listInvoices(customer, page, ctx));
    for (const service of services) {
      // One the snapshot does not hold, of an order a write recorded since: born with that order.
      const orderField = service.order_id === null ? null : `order:${service.order_id}`;
      const born = baseline && orderField !== null && orderField in snapshot && !(`service:${service.id}` in snapshot) && (await since(orderField));
      await events.observe(customer.accountId, { kind: 'service', resource: service }, { baseline: baseline && !born, readAt: servicesReadAt, reportFrom });
    }
    for (const invoice of invoices) await events.observe(customer.accountId, { kind: 'invoice', resource: invoice }, { baseline, readAt: invoicesReadAt, reportFrom });

    const { reads, left } = this.ordersToRead(customer.accountId, snapshot, services, baseline);
    for (const [id, quiet] of reads) {
      let order;
      const readAt = await store.clock(customer.accountId);
      try {
        order = await backend.getOrder(customer, id, ctx);
      } catch (error) {
        if (!(error instanceof BackendError && error.kind === 'not_found')) throw error;
        // Deleted upstream (admins delete stale pending orders): a known one is forgotten, else it
        // would be read every pass and kept for good.
        const known = snapshot[`order:${id}`];
        if (known !== undefined) await store.recordSnapshot(customer.accountId, `order:${id}`, known, null);
        continue;
      }
      await events.observe(customer.accountId, { kind: 'order', resource: order }, { baseline: quiet, readAt, reportFrom });
    }
    // The baseline's orders beyond this pass's reads existed before it too: marked, so that a later
    // pass reads them as baseline rather than reporting them as created, or (known open ones, of an
    // endpoint back from disabled) as changed while it was disabled. One a write recorded since the
    // endpoint began to report keeps its state: a later pass reports its change.
    if (baseline) {
      for (const id of left) {
        if (!(await since(`order:${id}`))) await store.recordSnapshot(customer.accountId, `order:${id}`, snapshot[`order:${id}`] ?? null, UNREAD_ORDER);
      }
    }
    // Recorded over the mark the pass read (under the detector's lease), naming this customer.
    if (baseline || mark.tag === '') await store.recordSnapshot(customer.accountId, BASELINE_FIELD, mark?.state ?? null, markState(account, new Date()), customer.upstreamId);
    if (servicesFailure !== null) throw servicesFailure;
  }

  /**
   * There is no order list in the Backend interface: orders are read one by one, at most
   * MAX_ORDER_READS a pass, each with whether it is read as a baseline (recorded, not reported): in
   * a baseline pass all are, a known open order too (an endpoint back from disabled, rebaseline).
   * New ones that services point at come first (they are news), as do closed ones whose service's
   * status changed (an order's can follow it: on FOSSBilling the order is the service), then those
   * the baseline left, then the open ones already known, in turn from where the last pass stopped:
   * an account with more open orders than one pass reads (unpaid orders stay pending) starves none.
   */
  private ordersToRead(accountId: string, snapshot: Record<string, string>, services: Service[], baseline: boolean) {
    const fresh = new Set<string>();
    const followed = new Set<string>();
    for (const service of services) {
      if (service.order_id === null) continue;
      const order = snapshot[`order:${service.order_id}`];
      const serviceWas = snapshot[`service:${service.id}`];
      if (order === undefined) fresh.add(service.order_id);
      else if (order !== UNREAD_ORDER && !OPEN_ORDER.has(order) && serviceWas !== undefined && serviceWas !== service.status) followed.add(service.order_id);
    }
    const unread: string[] = [];
    const open: string[] = [];
    for (const [field, state] of Object.entries(snapshot)) {
      if (!field.startsWith('order:')) continue;
      if (state === UNREAD_ORDER) unread.push(field.slice('order:'.length));
      else if (OPEN_ORDER.has(state)) open.push(field.slice('order:'.length));
    }
    const plan: Array<[string, boolean]> = [
      ...[...fresh, ...followed].map((id): [string, boolean] => [id, baseline]),
      ...unread.map((id): [string, boolean] => [id, true]),
      ...inTurn(open, this.lastOpenRead.get(accountId)).map((id): [string, boolean] => [id, baseline]),
    ];
    const reads = plan.slice(0, MAX_ORDER_READS);
    const lastOpen = reads.slice(fresh.size + followed.size + unread.length).at(-1);
    if (lastOpen) this.lastOpenRead.set(accountId, lastOpen[0]);
    // Those a baseline pass leaves unread (the ones already marked stay so).
    const left = plan.slice(MAX_ORDER_READS).flatMap(([id]) => (snapshot[`order:${id}`] === UNREAD_ORDER ? [] : [id]));
    return { reads, left };
  }
}

/** Ids in numeric order, starting after `after` and wrapping around. */
function inTurn(ids: string[], after: string | undefined): string[] {
  const byId = (a: string, b: string) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
  const sorted = ids.sort(byId);
  const start = after === undefined ? -1 : sorted.findIndex((id) => byId(id, after) > 0);
  return start <= 0 ? sorted : [...sorted.slice(start), ...sorted.slice(0, start)];
}

async function readAll<T>(read: (page: { page: number; perPage: number }) => Promise<PageResult<T>>): Promise<T[]> {
  const items: T[] = [];
  for (let page = 1; page <= MOST_PAGES; page += 1) {
    const result = await read({ page, perPage: PER_PAGE });
    items.push(...result.items);
    // A short page is the last, whatever the total says.
    if (items.length >= result.total || result.items.length < PER_PAGE) return items;
  }
  throw new Error(`the upstream list did not end within ${MOST_PAGES} pages of ${PER_PAGE}: its pagination is not to be trusted`);
}
