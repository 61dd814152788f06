/**
 * One admin endpoint = one file under src/admin/routes/ exporting an `AdminEndpoint`, as v1's
 * endpoints do: its zod schemas validate the input, shape the output and make the admin OpenAPI
 * document. The pipeline (register.ts) authenticates the admin token, checks its scope and its
 * rate limit, validates, runs idempotent endpoints under an Idempotency-Key, and audits every call.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { z } from 'zod';
import type { AnyReason } from '../errors.js';
import type { AdminService } from './service.js';
import type { WebhookAdmin } from './webhook-service.js';
import type { AdminScope, AdminTokenConfig } from './tokens.js';

/** A scope, or `any`: every valid admin token (the OpenAPI document). */
export type AdminEndpointScope = AdminScope | 'any';

/** What the call touched, for its audit record: from the path, and from the body and answer (`subject`). */
export interface AuditSubject {
  accountId?: string;
  keyId?: string;
  /** A key the call made (issue, rotate). */
  newKeyId?: string;
  eventId?: string;
}

export interface AdminHandlerContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  requestId: string;
  /** The admin token that called. */
  caller: AdminTokenConfig;
  service: AdminService;
  webhooks: WebhookAdmin;
  /** Idempotent endpoints: names this use of the Idempotency-Key, the same across its retries. */
  recordId: string | undefined;
  log: FastifyBaseLogger;
}

export interface AdminHandlerResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface AdminResponseSpec {
  description: string;
  schema: z.ZodType;
  headers?: Record<string, string>;
}

export interface AdminEndpoint<P extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType, B extends z.ZodType = z.ZodType> {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** The full path, e.g. `/admin/v1/accounts/:id`. */
  url: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  scope: AdminEndpointScope;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * Requires `Idempotency-Key`: a retry with the same key answers what the first call answered and
   * does nothing again. Answers holding a key are stored sealed (see register.ts).
   */
  idempotent?: boolean;
  responses: Record<number, AdminResponseSpec>;
  /** Reasons this endpoint answers with beyond those every admin endpoint of its kind has. */
  errors: AnyReason[];
  /**
   * What the call names beyond its path, for the audit record: from the validated body (also when
   * the call then fails), and from the answer when it succeeded (the key a call made).
   */
  subject?(call: { body: z.infer<B> | undefined; answer: unknown }): AuditSubject;
  handler(ctx: AdminHandlerContext<z.infer<P>, z.infer<Q>, z.infer<B>>): Promise<AdminHandlerResult>;
}

/** Keeps the generic parameters when an endpoint is written as an object literal. */
export function defineAdminEndpoint<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(
  endpoint: AdminEndpoint<P, Q, B>,
): AdminEndpoint<P, Q, B> {
  return endpoint;
}
