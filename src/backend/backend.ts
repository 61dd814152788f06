/**
 * What a billing backend must offer the v1 routes. A mapping module (`mappings/<backend>/`)
 * implements it; routes see nothing else of the upstream.
 */
import type { TraceContext } from '../ops/trace.js';
import type { BackendWait } from './wait.js';
import type {
  Account,
  ActionResult,
  Balance,
  Credentials,
  Invoice,
  InvoiceDocument,
  Order,
  OrderInput,
  PageRequest,
  PageResult,
  Product,
  Service,
  ServiceAction,
} from '../v1/schemas.js';

/** Operations of the gateway that a failing doctor check can stop (nothing is sent upstream then). */
export type DoctorGuardedOperation = 'orders';

/**
 * One result of a backend's self-check (`doctor`). Every text is for the operator and safe to log:
 * no credential, no customer data.
 */
export interface DoctorCheck {
  /** Stable identifier, e.g. `order-key-field`. */
  id: string;
  /** What is checked, one line. */
  title: string;
  /**
   * `warn`: nothing to verify yet (not a failure); `skip`: not verified because something failed
   * (an earlier check, a read): the gateway keeps what the previous run found.
   */
  status: 'pass' | 'fail' | 'warn' | 'skip';
  /** What was found. */
  detail: string;
  /** What the operator should do; present unless the check passed. */
  fix?: string;
  /** Refused while this check fails: the gateway could not do them safely. */
  blocks?: readonly DoctorGuardedOperation[];
}

/** What the deployment uses, so that a backend checks only what matters. */
export interface DiagnoseScope {
  /** The v1 service actions offered (they follow the profile). */
  serviceActions: readonly ServiceAction[];
}

/** The calling account, as the backend needs it: which upstream customer it is. */
export interface Customer {
  accountId: string;
  /** The one upstream customer this account maps to (for WHMCS, the clientid). */
  upstreamId: string;
}

export interface CallContext {
  requestId: string;
  /** The request's W3C trace: sent upstream with its calls, named in the lines logged about them. */
  trace?: TraceContext | undefined;
  /** Where the request's calls of the backend are timed (metrics: the gateway's own share of its time). */
  wait?: BackendWait | undefined;
  /** Present on the idempotent POSTs: lets the backend tag the upstream record for reconciliation. */
  idempotencyKey?: string;
  /**
   * The request's deadline, epoch ms (`requestDeadlineMs` after its arrival): every upstream call
   * made for it ends by then, and none is sent with too little of it left (src/upstream/request-deadline.ts).
   */
  deadline?: number | undefined;
}

/** What an idempotent POST gives the backend for the reconciliation of an earlier attempt. */
export interface OrderKeyContext extends CallContext {
  idempotencyKey: string;
  /** Names this use of the key (kept across its retries): the upstream tag ties an order to it. */
  idempotencyRecord: string;
}

/** For a write whose outcome cannot be observed. */
export interface WriteContext extends CallContext {
  /**
   * Write-ahead: called right before the write is sent, so that a later attempt knows to
   * reconcile. When it throws, nothing may be sent.
   */
  beforeWrite(): Promise<void>;
}

/**
 * What the search for an earlier attempt's order found. `absent` is proof: every service of the
 * customer was read and each one that could carry the key showed its value. Anything less is
 * `unknown`, with the reason for the operator (never a secret).
 */
export type OrderSearch = { kind: 'found'; order: Order } | { kind: 'absent' } | { kind: 'unknown'; reason: string };

/** What a backend can do, so that the routes refuse the rest before anything is recorded or sent. */
export interface BackendCapabilities {
  /** The v1 service actions it can carry out (the deployment offers those of its profile among them). */
  readonly serviceActions: readonly ServiceAction[];
  /**
   * Whether it can find an order again by its idempotency key (`findOrderByIdempotencyKey`).
   * Without it, an order whose earlier attempt's outcome is unknown answers 503 and nothing is sent.
   */
  readonly reconcilesOrders: boolean;
  /**
   * What `cancel` answers when it supports it: `scheduled` (202, at the billing period's end) or
   * `completed` (200, at once). The OpenAPI document says so; absent, it names both.
   */
  readonly cancelOutcome?: 'scheduled' | 'completed';
}

export interface Backend {
  readonly name: string;
  readonly capabilities: BackendCapabilities;
  /** The longest a write may take upstream; a sent write's idempotency claim settles a little longer. */
  readonly writeTimeoutMs: number;
  getAccount(customer: Customer, ctx: CallContext): Promise<Omit<Account, 'id'>>;
  /**
   * May return shared, deeply frozen objects while the backend caches its catalog: callers must
   * not mutate them (frozen response bodies let the routes reuse their serialised output).
   */
  listProducts(ctx: CallContext): Promise<Product[]>;
  getProduct(id: string, ctx: CallContext): Promise<Product>;
  placeOrder(customer: Customer, input: OrderInput, ctx: OrderKeyContext & WriteContext): Promise<Order>;
  /**
   * Looks for the order that an earlier attempt with this key and record placed. Called when that
   * attempt sent its write and its outcome is unknown, before anything is sent again. Never throws
   * for a failed read: that is `unknown`. `beforeWrite`, when given, precedes any write that
   * completes the order found (WHMCS: AcceptOrder, which the earlier attempt never got to).
   */
  findOrderByIdempotencyKey(customer: Customer, ctx: OrderKeyContext & Partial<WriteContext>): Promise<OrderSearch>;
  getOrder(customer: Customer, id: string, ctx: CallContext): Promise<Order>;
  listServices(customer: Customer, page: PageRequest, ctx: CallContext): Promise<PageResult<Service>>;
  getService(customer: Customer, id: string, ctx: CallContext): Promise<Service>;
  getCredentials(customer: Customer, id: string, ctx: CallContext): Promise<Credentials>;
  runServiceAction(customer: Customer, id: string, action: ServiceAction, ctx: WriteContext): Promise<ActionResult>;
  getBalance(customer: Customer, ctx: CallContext): Promise<Balance>;
  listInvoices(customer: Customer, page: PageRequest, ctx: CallContext): Promise<PageResult<Invoice>>;
  getInvoiceDocument(customer: Customer, id: string, ctx: CallContext): Promise<InvoiceDocument>;
  /**
   * Checks the real upstream before it is trusted: credentials, permissions, the setup the mapping
   * relies on. Must not change anything upstream; rejects only on a bug (failures are results).
   */
  diagnose?(scope: DiagnoseScope): Promise<DoctorCheck[]>;
  /** True when the upstream answers; used by the health check. Must not throw. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export type BackendErrorKind =
  /** The record does not exist or is not the customer's. */
  | 'not_found'
  /** A valid action that the record's current state forbids. */
  | 'conflict'
  /**
   * A well-formed request the backend refuses (unknown product, disabled cycle, bad option). A
   * detail that starts with the field it refuses, `billing_cycle: …` or `config_options.4: …`,
   * names it: the problem points at it (contract §2).
   */
  | 'validation'
  /** The backend answered with an error or something unreadable. */
  | 'upstream_error'
  /** The backend could not be reached (nothing was sent, or the connection was refused). */
  | 'unavailable'
  /** The backend did not answer in time. */
  | 'timeout'
  /** The backend is set up in a way that makes the operation unsafe (found by `diagnose`); nothing was sent. */
  | 'misconfigured';

/**
 * A failure the backend reports to the gateway. `detail` is safe to show a client (written by the
 * mapping, never copied from upstream text); `operatorMessage` is for the logs only.
 */
export class BackendError extends Error {
  readonly kind: BackendErrorKind;
  readonly detail: string;
  readonly operatorMessage: string | undefined;
  /** True when the request may have taken effect upstream (sent, then timed out or reset). */
  readonly outcomeUnknown: boolean;
  /**
   * When the backend knows how long the failure will last (a circuit breaker that is open), the
   * milliseconds until a retry may succeed: the hint for the client's Retry-After.
   */
  readonly retryAfterMs: number | undefined;
  /**
   * True when the upstream turned the request away before it could run (it refused the gateway's
   * credentials, or what was forwarded): a write's Idempotency-Key is free again at once.
   */
  readonly notRun: boolean;

  constructor(
    kind: BackendErrorKind,
    detail: string,
    options: { operatorMessage?: string; outcomeUnknown?: boolean; retryAfterMs?: number; notRun?: boolean; cause?: unknown } = {},
  ) {
    super(detail, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'BackendError';
    this.kind = kind;
    this.detail = detail;
    this.operatorMessage = options.operatorMessage;
    this.outcomeUnknown = options.outcomeUnknown ?? false;
    this.retryAfterMs = options.retryAfterMs;
    this.notRun = options.notRun ?? false;
  }
}
