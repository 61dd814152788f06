/**
 * The delivery worker every instance runs: it claims due outbox entries, signs and sends each one,
 * and decides what happens next (done, retried later, given up, endpoint disabled). Delivery is at
 * least once: an instance that dies mid-delivery leaves the entry to be claimed again. At most
 * `perAccountConcurrency` of one account's deliveries are in flight across all instances (reference
 * S7; slots in the store): a claimed entry beyond that is parked unattempted in its account's line
 * until one of that account's deliveries ends, so that an account whose receiver hangs holds a few
 * slots, never all of them, its backlog never stands before the other accounts' events, and a
 * receiver never gets more at once however many instances deliver.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { GatewayConfig } from '../config.js';
import { isDisabled } from '../keys/key-service.js';
import type { WebhookDeliveryOutcome } from '../ops/observers.js';
import { createRepeatedLog, type RepeatedLog } from '../repeated-log.js';
import { StoreUnavailableError, type KeyStore } from '../stores/types.js';
import type { ClaimedDelivery, WebhookDisabledReason, WebhookOutbox, WebhookRecord, WebhookStore } from '../stores/webhook-types.js';
import { DeliveryLog } from './delivery-log.js';
import type { SecretBox } from './secret-box.js';
import { signDelivery } from './signing.js';
import { parseRetryAfter, sendWebhook, type SendResult, type TransportOptions } from './transport.js';

/** Answers whose Retry-After is followed (reference W7): overloaded or unavailable, for now. */
const RETRY_AFTER_STATUSES = new Set([429, 502, 503, 504]);

export interface DeliveryWorkerOptions {
  outbox: WebhookOutbox;
  store: WebhookStore;
  /** The accounts, to drop the events of a disabled one. */
  accounts: Pick<KeyStore, 'getAccount'>;
  box: SecretBox;
  /** Its encryption keys are the box's; the outbox bounds what waits. */
  config: Omit<GatewayConfig['webhooks'], 'encryptionKey' | 'previousEncryptionKeys' | 'maxWaitingPerAccount'>;
  transport: TransportOptions;
  log: FastifyBaseLogger;
  /** Told how each attempt ended (the metrics). */
  onAttempt?: (outcome: WebhookDeliveryOutcome) => void;
  /** Told when an endpoint is disabled, and why (the metrics). */
  onDisabled?: (reason: WebhookDisabledReason) => void;
  /** Told when the outbox could not be reached (the metrics' store errors). */
  onStoreError?: () => void;
  now?: () => number;
  /** Uniform in [0, 1): where within the jitter each retry falls. */
  random?: () => number;
}

export class DeliveryWorker {
  /** Consumer name in the outbox; new per process, so a restarted instance claims its old entries after the idle time. */
  readonly consumer = `worker-${randomUUID()}`;
  private readonly inFlight = new Set<Promise<void>>();
  /** Deliveries in flight by account id (absent: none). */
  private readonly accountsInFlight = new Map<string, number>();
  private readonly stopping = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private pollAgain = false;
  private readonly history: DeliveryLog;
  /** An outbox down is met at every poll, a dead receiver at each attempt of each event: once, then counted. */
  private readonly repeats: RepeatedLog;

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.history = new DeliveryLog(options.store, options.log, () => this.now());
    this.repeats = createRepeatedLog(options.log);
  }

  start(): void {
    this.schedule();
  }

  /** Looks for work now (an event was just enqueued). */
  wake(): void {
    if (this.stopping.signal.aborted) return;
    if (this.polling) {
      this.pollAgain = true;
      return;
    }
    clearTimeout(this.timer);
    void this.poll();
  }

  /** Stops claiming and aborts deliveries in flight: their entries stay claimed and are taken over later. */
  async stop(): Promise<void> {
    this.stopping.abort();
    clearTimeout(this.timer);
    await Promise.allSettled([...this.inFlight]);
    this.repeats.flush();
  }

  private schedule(): void {
    if (this.stopping.signal.aborted) return;
    this.timer = setTimeout(() => void this.poll(), this.options.config.workerIntervalMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    const { outbox, config } = this.options;
    this.polling = true;
    try {
      do {
        this.pollAgain = false;
        const room = config.concurrency - this.inFlight.size;
        if (room <= 0 || this.stopping.signal.aborted) break;
        const claimed = await outbox.claim(this.consumer, room, config.claimIdleMs);
        // A slot refused (the account's share is in flight here or on other instances): parked,
        // back only when one of that account's deliveries ends, so claiming again at once reads on.
        const started = await Promise.all(claimed.map((delivery) => this.startDelivery(delivery)));
        await Promise.all(claimed.filter((_, index) => !started[index]).map((delivery) => outbox.park(delivery)));
        if (claimed.length === room) this.pollAgain = true;
      } while (this.pollAgain);
    } catch (error) {
      if (error instanceof StoreUnavailableError) this.options.onStoreError?.();
      this.repeats.note('warn', 'webhook outbox unavailable; retrying', {}, { err: error });
    } finally {
      this.polling = false;
      this.schedule();
    }
  }

  /** Starts the delivery unless its account already has its share in flight (here or on any instance); false if not started. */
  private async startDelivery(delivery: ClaimedDelivery): Promise<boolean> {
    const { store, config } = this.options;
    const { accountId } = delivery;
    const running = this.accountsInFlight.get(accountId) ?? 0;
    if (running >= config.perAccountConcurrency) return false;
    this.accountsInFlight.set(accountId, running + 1);
    const done = () => {
      const left = (this.accountsInFlight.get(accountId) ?? 1) - 1;
      if (left === 0) this.accountsInFlight.delete(accountId);
      else this.accountsInFlight.set(accountId, left);
    };
    // A slot outlives the longest attempt as a claim does: a dead holder's frees as its entry is taken over.
    let slot = false;
    try {
      slot = await store.takeDeliverySlot(accountId, delivery.handle, config.perAccountConcurrency, config.claimIdleMs);
    } finally {
      if (!slot) done();
    }
    if (!slot) return false;
    this.track(this.deliver(delivery).finally(done));
    return true;
  }

  private track(work: Promise<void>): void {
    const tracked = work
      .catch((error: unknown) => this.options.log.error({ err: error }, 'webhook delivery failed unexpectedly'))
      .finally(() => {
        this.inFlight.delete(tracked);
        this.wake();
      });
    this.inFlight.add(tracked);
  }

  /** Delivers within the slot taken for it, and frees that slot. */
  private async deliver(delivery: ClaimedDelivery): Promise<void> {
    const { store } = this.options;
    try {
      await this.attempt(delivery);
    } finally {
      await store.freeDeliverySlot(delivery.accountId, delivery.handle).catch((error: unknown) => {
        this.options.log.warn({ err: error, account_id: delivery.accountId }, 'webhook delivery slot not freed; it frees itself in claimIdleMs');
      });
    }
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const { outbox, store, accounts } = this.options;
    const [record, account] = await Promise.all([store.get(delivery.accountId), accounts.getAccount(delivery.accountId)]);
    // Gone even where its endpoint is still stored (a deletion's last clean-up failed): never sent to.
    if (account === null) return this.dropOfDeleted(delivery);
    // Not sent while the endpoint or the account is disabled (an account disabled because its key
    // leaked may have had its endpoint set by whoever holds the key); not kept for later (W9).
    if (!record || record.status === 'disabled' || isDisabled(account)) {
      this.options.onAttempt?.('dropped');
      await this.history.ended(delivery, 'dropped');
      return outbox.complete(delivery, 'dropped');
    }

    const at = new Date(this.now());
    let secrets: string[];
    try {
      secrets = this.secrets(record, at, delivery.accountId);
    } catch (error) {
      // Sealed with another key (webhooks.encryptionKey changed): retrying cannot help.
      this.options.log.error({ err: error, event_id: delivery.eventId, account_id: delivery.accountId }, 'webhook secret cannot be opened; event failed');
      this.attempted('failed');
      await this.history.ended(delivery, 'failed', 'signing secret cannot be opened');
      return outbox.complete(delivery, 'failed');
    }
    const headers = { ...delivery.trace, ...signDelivery(secrets, delivery.eventId, at, delivery.body) };
    const result = await sendWebhook(record.url, headers, delivery.body, { ...this.options.transport, signal: this.stopping.signal });
    // Shutting down: leave the entry claimed; another instance (or this one after restart) takes it over.
    if (this.stopping.signal.aborted && result.kind === 'failed') return;
    await this.settle(delivery, record, result);
  }

  private async settle(delivery: ClaimedDelivery, record: WebhookRecord, result: SendResult): Promise<void> {
    const { outbox, store, config, log } = this.options;
    const attempts = delivery.attempts + 1;
    const status = result.kind === 'answered' ? result.status : null;
    const ok = status !== null && status >= 200 && status < 300;
    const endedAt = new Date(this.now()).toISOString();
    // Null when the URL was unset or replaced during the attempt: then its answer was the old URL's,
    // and it neither disables the endpoint set now nor counts against it (the event goes on to that one).
    const after = await store.recordDelivery(delivery.accountId, record.url, { at: endedAt, httpStatus: status, attempts }, ok);
    const logged = { event_id: delivery.eventId, account_id: delivery.accountId, attempts, http_status: status };
    const facts = { attempts, lastStatus: status, lastError: result.kind === 'answered' ? null : result.reason, lastAttemptAt: endedAt };
    if (ok) {
      this.attempted('delivered');
      await this.history.attempted(delivery, facts, 'delivered', null);
      return outbox.complete(delivery, 'delivered');
    }

    // A receiver that is down fails each event of its backlog, at each retry step, alike.
    const failure = { account_id: delivery.accountId, http_status: status, reason: result.kind === 'answered' ? undefined : result.reason };
    this.repeats.note('info', 'webhook delivery attempt failed', failure, { event_id: delivery.eventId, attempts });
    // A blocked attempt is counted as such, whatever happens to the event next.
    const failed = (next: WebhookDeliveryOutcome) => this.attempted(result.kind === 'blocked' ? 'blocked' : next);
    const failingFor = after?.failingSince ? this.now() - Date.parse(after.failingSince) : 0;
    if (after !== null && (status === 410 || failingFor >= config.disableAfterMs)) {
      const reason = status === 410 ? 'gone' : 'failing';
      await store.disable(delivery.accountId, record.url, reason);
      // Reference W9 wants someone told: the operator's alert on this metric and log line, the
      // reseller through disabled_reason on GET /v1/webhooks.
      log.warn({ ...logged, url_host: new URL(record.url).host, reason }, 'webhook endpoint disabled');
      this.options.onDisabled?.(reason);
      failed('failed');
      await this.history.attempted(delivery, facts, 'dropped', null);
      return outbox.complete(delivery, 'dropped');
    }
    const scheduled = config.retryScheduleMs[attempts];
    if (scheduled === undefined) {
      this.repeats.note('warn', 'webhook event failed: no attempts left', { account_id: delivery.accountId }, logged);
      failed('failed');
      await this.history.attempted(delivery, facts, 'failed', null);
      return outbox.complete(delivery, 'failed');
    }
    const nextDelay = this.delayBefore(scheduled, result);
    failed('retrying');
    await this.history.attempted(delivery, facts, 'pending', new Date(this.now() + nextDelay).toISOString());
    await outbox.reschedule(delivery, nextDelay);
  }

  /**
   * The schedule's delay with its jitter, or the receiver's Retry-After when later (429/502/503/504),
   * capped at the schedule's longest step: a receiver cannot park an event for longer, and no
   * attempt is lost.
   */
  private delayBefore(scheduled: number, result: SendResult): number {
    const { retryJitter, retryScheduleMs } = this.options.config;
    const random = this.options.random ?? Math.random;
    const jittered = Math.round(scheduled * (1 + retryJitter * (2 * random() - 1)));
    if (result.kind !== 'answered' || !RETRY_AFTER_STATUSES.has(result.status)) return jittered;
    const asked = parseRetryAfter(result.retryAfter, this.now());
    if (asked === null) return jittered;
    return Math.max(jittered, Math.min(asked, Math.max(...retryScheduleMs)));
  }

  private attempted(outcome: WebhookDeliveryOutcome): void {
    this.options.onAttempt?.(outcome);
  }

  /**
   * An event of a deleted account (queued before its deletion, or by a change noticed as it went):
   * dropped unlogged, and whatever of the account is still stored or was written since its deletion
   * (an endpoint its last clean-up missed, a delivery logged, a number taken) forgotten again; its
   * data must not come back, nor any event reach its URL.
   */
  private async dropOfDeleted(delivery: ClaimedDelivery): Promise<void> {
    const { outbox, store } = this.options;
    this.attempted('dropped');
    await Promise.all([store.forgetAccount(delivery.accountId), outbox.forgetAccount(delivery.accountId)]);
    return outbox.complete(delivery, 'dropped');
  }

  /**
   * The current secret, and during a rotation's overlap the previous one too when it can be opened:
   * a rotation is how a reseller recovers from secrets sealed with another key, and the old one,
   * kept as the previous for 24 h, must not fail every event meanwhile. Only the current one must open.
   */
  private secrets(record: WebhookRecord, at: Date, accountId: string): string[] {
    const secrets = [this.options.box.open(record.secret)];
    if (record.previousSecret && record.previousSecretExpiresAt && Date.parse(record.previousSecretExpiresAt) > at.getTime()) {
      try {
        secrets.push(this.options.box.open(record.previousSecret));
      } catch (error) {
        this.options.log.warn({ err: error, account_id: accountId }, 'previous webhook secret cannot be opened; signing with the current one only');
      }
    }
    return secrets;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}
