/**
 * Configuration of the FOSSBilling mapping. The API token is a plain field so the gateway's config
 * loader can fill it from the environment (FOSSBILLING_API_TOKEN).
 */
import { z } from 'zod';
import { isTimeZone } from '../../src/backend/time-zone.js';
import { CircuitBreakerSchema, MaxResponseBytesSchema, UpstreamUrlSchema } from '../../src/upstream/settings.js';

const PositiveInt = z.number().int().positive();
const ProductId = z.string().regex(/^[1-9][0-9]{0,17}$/, 'must be a FOSSBilling product id (digits)');

/** Per admin API method (`module/method`); entries given in config are added to (or replace) these. */
const DEFAULT_METHOD_TIMEOUTS_MS: Readonly<Record<string, number>> = {
  // order/create may activate the order (provisioning on a remote panel) and issue an invoice.
  'order/create': 60_000,
  'order/suspend': 60_000,
  'order/unsuspend': 60_000,
  'order/cancel': 60_000,
  // The health probe must answer quickly or count as down.
  'product/get_types': 5_000,
};

export const FossbillingConfigSchema = z.strictObject({
  /** Base URL of FOSSBilling; the admin API is `<url>/api/admin/<module>/<method>`. */
  url: UpstreamUrlSchema,
  /** The API token of a staff member (HTTP Basic `admin:<token>`); give it only the permissions used. */
  apiToken: z.string().min(1),
  /** Deadline of one call, for methods without their own. */
  timeoutMs: PositiveInt.default(15_000),
  /** A connection that is not up by then fails as `unavailable` (nothing was sent). */
  connectTimeoutMs: PositiveInt.default(5_000),
  /** See MaxResponseBytesSchema: a page of 500 orders or the product list is the largest answer. */
  maxResponseBytes: MaxResponseBytesSchema,
  methodTimeoutsMs: z
    .record(z.string().regex(/^[a-z_]+\/[a-z_]+$/), PositiveInt)
    .default({})
    .transform((overrides) => ({ ...DEFAULT_METHOD_TIMEOUTS_MS, ...overrides })),
  /** Size of the connection pool. */
  connections: PositiveInt.default(16),
  /**
   * Products that may be listed and ordered, hidden ones too, while FOSSBilling shows them enabled.
   * Empty: every product FOSSBilling shows as enabled and not hidden (its own flags).
   */
  publicProductIds: z.array(ProductId).default([]),
  /** The order meta key that holds `<account>:<Idempotency-Key>`, searched to reconcile orders. */
  orderKeyMeta: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/).default('gateway_idempotency_key'),
  /** `order/create` flags: activate (provision) at once, and whether an invoice is issued. */
  activateOrders: z.boolean().default(false),
  invoiceOption: z.enum(['issue-invoice', 'no-invoice']).default('issue-invoice'),
  /** Used when a client has no currency of its own (FOSSBilling then bills in its default one). */
  defaultCurrency: z.string().regex(/^[A-Z]{3}$/).default('USD'),
  /** Reason recorded on suspend and cancel. */
  actionReason: z.string().min(1).max(500).default('Requested through the reseller API'),
  /** IANA zone of the FOSSBilling server clock, for its "YYYY-MM-DD HH:MM:SS" values. */
  timeZone: z.string().refine(isTimeZone, 'must be an IANA time zone').default('UTC'),
  productCacheTtlMs: PositiveInt.default(60_000),
  /** See CircuitBreakerSchema. */
  circuitBreaker: CircuitBreakerSchema,
});

export type FossbillingConfig = z.infer<typeof FossbillingConfigSchema>;
