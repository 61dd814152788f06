/**
 * The webhook machinery of one gateway instance: the event emitter the routes use, the delivery
 * worker and the change detector, started with the app and stopped before the stores close.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Backend } from '../backend/backend.js';
import type { GatewayConfig } from '../config.js';
import type { WebhookObserver } from '../ops/observers.js';
import { StoreUnavailableError, type Stores } from '../stores/types.js';
import { ChangeDetector } from './detector.js';
import { WebhookEvents } from './emitter.js';
import type { SecretBox } from './secret-box.js';
import type { ResolveHost } from './url-policy.js';
import { DeliveryWorker } from './worker.js';

export interface Webhooks {
  events: WebhookEvents;
  box: SecretBox;
  /** Whether URLs may use http, any port, and point at private addresses (sandbox). */
  allowPrivateTargets: boolean;
  /** The ports a URL may use otherwise (`webhooks.allowedPorts`). */
  allowedPorts: readonly number[];
  start(): void;
  stop(): Promise<void>;
}

export function allowPrivateTargets(config: Pick<GatewayConfig, 'webhooks'>): boolean {
  return config.webhooks.allowPrivateTargets ?? false;
}

export function createWebhooks(
  config: Pick<GatewayConfig, 'webhooks' | 'keys'>,
  stores: Stores,
  /** Absent when the gateway forwards to a v1 upstream: that one detects changes and sends their events. */
  backend: Backend | undefined,
  resolve: ResolveHost,
  log: FastifyBaseLogger,
  observer: WebhookObserver | undefined,
  /** What seals the endpoints' secrets (secretBoxFor). */
  box: SecretBox,
): Webhooks {
  const privateTargets = allowPrivateTargets(config);
  const worker = new DeliveryWorker({
    outbox: stores.webhookOutbox,
    store: stores.webhooks,
    accounts: stores.keys,
    box,
    config: config.webhooks,
    transport: { resolve, allowPrivateTargets: privateTargets, allowedPorts: config.webhooks.allowedPorts },
    log,
    onAttempt: (outcome) => observer?.recordDelivery(outcome),
    onDisabled: (reason) => observer?.endpointDisabled(reason),
    onStoreError: () => observer?.storeError('webhooks'),
  });
  // The outbox is shared by every instance: each one's gauges show the whole backlog.
  observer?.observeOutbox(async () => {
    const backlog = await stores.webhookOutbox.backlog().catch((error: unknown) => {
      if (error instanceof StoreUnavailableError) observer.storeError('webhooks');
      throw error;
    });
    return { depth: backlog.depth, oldestPendingAgeSeconds: backlog.oldestAgeMs / 1000 };
  });
  const events = new WebhookEvents(stores.webhooks, stores.webhookOutbox, log, () => worker.wake(), Date.now, {
    onLost: (reason) => observer?.eventLost(reason),
  });
  const detector =
    backend &&
    new ChangeDetector({
      backend,
      keys: stores.keys,
      store: stores.webhooks,
      events,
      pollIntervalMs: config.webhooks.pollIntervalMs,
      log,
    });
  return {
    events,
    box,
    allowPrivateTargets: privateTargets,
    allowedPorts: config.webhooks.allowedPorts,
    start() {
      worker.start();
      detector?.start();
    },
    async stop() {
      await Promise.all([detector?.stop(), worker.stop()]);
      // Events of writes held for the stores: one last attempt while they are still open.
      await events.close();
    },
  };
}
