/**
 * The admin API of a cluster's primary, which holds the ops listener but serves no v1 request: the
 * same service layer over the shared (Redis) stores. A revocation reaches the workers' key caches
 * through the store's invalidation channel; a replayed event is queued in the shared outbox, and a
 * worker delivers it at its next poll (the primary runs no delivery worker).
 */
import type { FastifyBaseLogger } from 'fastify';
import { upstreamIdCheck, type BackendRegistry } from '../backend/registry.js';
import type { ResolvedConfig } from '../config.js';
import { FileAuditLog } from '../audit.js';
import { KeyService } from '../keys/key-service.js';
import { resolvePepper } from '../keys/pepper.js';
import type { Stores } from '../stores/types.js';
import { WebhookEvents } from '../webhooks/emitter.js';
import { secretBoxFor } from '../webhooks/secret-box.js';
import { createAdminApi, type AdminApi } from './api.js';
import type { AdminAuditRecord } from './audit.js';

export function createPrimaryAdminApi(config: ResolvedConfig, stores: Stores, log: FastifyBaseLogger, registry: BackendRegistry): { admin: AdminApi | null; close(): Promise<void> } {
  const audit = new FileAuditLog<AdminAuditRecord>(config.admin.auditFile);
  const keys = new KeyService(stores.keys, resolvePepper(config), {
    cacheTtlMs: config.keys.cacheTtlMs,
    staleIfErrorMs: config.keys.staleIfErrorMs,
    previousPeppers: config.keys.previousPeppers,
    issueChecksums: config.keys.issueChecksums,
  });
  const events = new WebhookEvents(stores.webhooks, stores.webhookOutbox, log, () => undefined);
  const upstreamIdProblem = upstreamIdCheck(registry, config.upstream.backend);
  const admin = createAdminApi({ config, stores, keys, webhooks: { events, box: secretBoxFor(config) }, audit, upstreamIdProblem });
  return { admin, close: () => audit.close() };
}
