/**
 * One v1 endpoint = one file that exports an `Endpoint`. Its zod schemas are the contract: they
 * validate the input, shape the output and produce the OpenAPI document.
 */
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import type { z } from 'zod';
import type { Backend, CallContext, Customer } from '../backend/backend.js';
import type { Profile, ResolvedConfig } from '../config.js';
import type { Reason } from '../errors.js';
import type { AuditLog } from '../audit.js';
import type { DoctorGate } from '../doctor/monitor.js';
import type { InvoicePdfRenderer } from '../pdf/render-pool.js';
import type { KeyService } from '../keys/key-service.js';
import type { IdempotentAttempt } from './idempotency.js';
import type { AccountRecord, ApiKeyRecord, Stores } from '../stores/types.js';
import type { ServiceAction } from '../v1/schemas.js';
import type { Scope } from '../keys/scopes.js';
import type { Webhooks } from '../webhooks/service.js';

export type EndpointScope = Scope | 'public' | 'any';

export interface ResponseSpec {
  description: string;
  /** JSON body schema; absent for non-JSON bodies. */
  schema?: z.ZodType;
  contentType?: 'application/json' | 'application/pdf';
  headers?: Record<string, string>;
  /** Fields set over the example built from the schema, where the schema alone would show an answer never given. */
  example?: Record<string, unknown>;
}

/** What this deployment offers, as its OpenAPI document describes it. */
export interface DocumentedOffer {
  profile: Profile;
  /** The service actions offered: the profile's set, narrowed to what the backend supports when the gateway maps one. */
  actions: readonly ServiceAction[];
  /** What `cancel` answers: `scheduled` (202, at the billing period's end), `completed` (200, at once), or either (a v1 upstream's choice). */
  cancel: 'scheduled' | 'completed' | 'either';
}

/** Where an endpoint's document depends on the offer (see Endpoint.documented). */
export interface DocumentedOverrides {
  /** The body as documented, where the contract's set is narrower than what validation takes. */
  body?: z.ZodType;
  description?: string;
  /** Success statuses this deployment never answers. */
  omitResponses?: number[];
}

export interface Caller {
  key: ApiKeyRecord;
  account: AccountRecord;
  customer: Customer;
}

/**
 * What every handler works with, whatever serves the v1 resources: the stores and the app's services
 * around them (one bag per app).
 */
export interface GatewayDeps {
  config: ResolvedConfig;
  /** Whether the upstream answers (health). */
  upstream: Pick<Backend, 'ping'>;
  stores: Stores;
  keys: KeyService;
  audit: AuditLog;
  /** Operations stopped while a backend self-check fails (see src/doctor/). */
  doctor: DoctorGate;
  /** DNS resolution for webhook URL checks (injected in tests: there is no DNS there). */
  resolveHost(host: string): Promise<string[]>;
  /** Webhook events, secrets and delivery. */
  webhooks: Webhooks;
  /** Renders invoice PDFs on threads apart from the event loop. */
  pdf: InvoicePdfRenderer;
}

/** A mapped gateway's bag: the gateway's, and the Backend the routes call. */
export interface EndpointDeps extends GatewayDeps {
  backend: Backend;
}

export interface HandlerContext<P, Q, B, D extends GatewayDeps = EndpointDeps> {
  params: P;
  query: Q;
  body: B;
  requestId: string;
  /** What the handler's backend calls are made for: the request id and its trace. */
  call: CallContext;
  /** Present on every endpoint whose scope is not `public`. */
  caller: Caller;
  idempotencyKey: string | undefined;
  /** Present on idempotent endpoints: this attempt's record, write-ahead and reconciliation needs. */
  attempt: IdempotentAttempt | undefined;
  deps: D;
  log: FastifyBaseLogger;
  /** The client's connection: work still waiting when it closes can be dropped (a queued PDF render). */
  connection: Socket;
}

/** A handler's context without the dependency bag: what the pipeline hands whatever answers. */
export type EndpointInput = Omit<HandlerContext<unknown, unknown, unknown>, 'deps'>;

export interface HandlerResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/**
 * How an endpoint behaves when the gateway forwards to an upstream that speaks v1 itself
 * (src/http/forwarding.ts). Without it, the request is forwarded and the upstream's answer is used
 * as it is (validated against the response schema).
 */
export interface Passthrough<P, Q, B> {
  /** Refuses before anything is forwarded (throw), for what this gateway decides itself. */
  refuse?(ctx: HandlerContext<P, Q, B, GatewayDeps>): void;
  /** This gateway's answer made from the upstream's successful one. */
  answer?(upstream: HandlerResult, ctx: HandlerContext<P, Q, B, GatewayDeps>): HandlerResult;
  /** This gateway's error made from the upstream's refusal (returned, then thrown). */
  failure?(error: unknown, ctx: HandlerContext<P, Q, B, GatewayDeps>): unknown;
}

export interface Endpoint<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
  D extends GatewayDeps = EndpointDeps,
> {
  method: 'GET' | 'POST' | 'PUT';
  /** Fastify route pattern, e.g. `/v1/orders/:id`. */
  url: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  scope: EndpointScope;
  params?: P;
  query?: Q;
  body?: B;
  /**
   * The document's view of this endpoint for what the deployment offers: a body narrower than
   * what validation takes (an action outside the set answers `invalid_action` with
   * `allowed_actions`, not a generic validation error), its description, the statuses it can answer.
   */
  documented?: (offer: DocumentedOffer) => DocumentedOverrides;
  /** Requires `Idempotency-Key` and runs under the idempotency rules (contract §5). */
  idempotent?: boolean;
  /**
   * Every request routed here writes one audit record, whatever its outcome, before the answer
   * leaves; an answer whose record cannot be written is replaced by a 503 (src/http/audited.ts).
   */
  audited?: boolean;
  responses: Record<number, ResponseSpec>;
  /**
   * The headers the contract fixes for a success answer (Location, Content-Disposition), from the
   * request's params and the answer's body. The handler sends these; a forwarder sends the same
   * for a v1 upstream's answer, whose own headers never pass.
   */
  answerHeaders?: (answer: { params: z.infer<P>; body: unknown }) => Record<string, string>;
  /** Error reasons this endpoint can answer with, beyond those every endpoint of its kind has. */
  errors: Reason[];
  /**
   * Answered by this gateway even when it forwards to a v1 upstream (health, the OpenAPI document):
   * such a handler needs no Backend.
   */
  local?: true;
  passthrough?: Passthrough<z.infer<P>, z.infer<Q>, z.infer<B>>;
  handler(ctx: HandlerContext<z.infer<P>, z.infer<Q>, z.infer<B>, D>): Promise<HandlerResult>;
}

/** An endpoint this gateway always answers itself. */
export type LocalEndpoint = Endpoint<z.ZodType, z.ZodType, z.ZodType, GatewayDeps> & { local: true };

export function isLocal(endpoint: Endpoint | LocalEndpoint): endpoint is LocalEndpoint {
  return endpoint.local === true;
}

/** Keeps the generic parameters when an endpoint is written as an object literal. */
export function defineEndpoint<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(
  endpoint: Endpoint<P, Q, B>,
): Endpoint<P, Q, B> {
  return endpoint;
}

/** An endpoint that needs no Backend and is answered here whatever serves the v1 resources. */
export function defineLocalEndpoint<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(
  endpoint: Omit<Endpoint<P, Q, B, GatewayDeps>, 'local'>,
): Endpoint<P, Q, B, GatewayDeps> & { local: true } {
  return { ...endpoint, local: true };
}
