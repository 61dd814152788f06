/**
 * Configuration of the WHMCS mapping. Secrets are plain fields so the gateway's config loader can
 * fill them from the environment (WHMCS_IDENTIFIER, WHMCS_SECRET, WHMCS_ACCESS_KEY).
 */
import { z } from 'zod';
import { isTimeZone } from '../../src/backend/time-zone.js';
import { CircuitBreakerSchema, MaxResponseBytesSchema, UpstreamUrlSchema } from '../../src/upstream/settings.js';

const PositiveInt = z.number().int().positive();
const ProductId = z.string().regex(/^[1-9][0-9]{0,17}$/, 'must be a WHMCS product id (digits)');
/** ModuleCustom calls `<module>_<func_name>()`: only plain PHP identifiers may be configured. */
const ModuleFunctionName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a PHP function name');

/** Module calls are synchronous calls to the remote panel and can take a long time. */
const DEFAULT_ACTION_TIMEOUTS_MS: Readonly<Record<string, number>> = {
  ModuleCustom: 90_000,
  ModuleSuspend: 90_000,
  ModuleUnsuspend: 90_000,
  ModuleTerminate: 90_000,
  AcceptOrder: 90_000,
  // AddOrder runs fraud checks, hooks and invoice creation; a timeout there forces a reconciliation.
  AddOrder: 30_000,
  // The health check's probe must answer quickly or count as down.
  GetCurrencies: 5_000,
};

const ModuleFunctionsSchema = z.strictObject({
  start: ModuleFunctionName.optional(),
  stop: ModuleFunctionName.optional(),
  reboot: ModuleFunctionName.optional(),
  reinstall: ModuleFunctionName.optional(),
});
export type ModuleFunctions = z.infer<typeof ModuleFunctionsSchema>;

/** func_names from each module's `_AdminCustomButtonArray` (see the WHMCS facts, §3). */
const DEFAULT_MODULE_FUNCTIONS: Readonly<Record<string, ModuleFunctions>> = {
  virtualizor: { start: 'start', stop: 'stop', reboot: 'reboot' },
  solusvmpro: { start: 'boot', stop: 'shutdown', reboot: 'reboot' },
  pvewhmcs: { start: 'vmStart', stop: 'vmShutdown', reboot: 'vmReboot' },
};

export const WhmcsConfigSchema = z.strictObject({
  /** Base URL of WHMCS; the API is `<url>/includes/api.php`. */
  url: UpstreamUrlSchema,
  identifier: z.string().min(1),
  secret: z.string().min(1),
  /** Sent as `accesskey`; when WHMCS has one configured, it replaces the API IP allow-list. */
  accessKey: z.string().min(1).optional(),
  /** Deadline of one call (queueing, connecting, sending, reading), for actions without their own. */
  timeoutMs: PositiveInt.default(15_000),
  /** A connection that is not up by then fails as `unavailable` (nothing was sent). */
  connectTimeoutMs: PositiveInt.default(5_000),
  /** See MaxResponseBytesSchema: GetProducts, the whole catalog, is the largest answer. */
  maxResponseBytes: MaxResponseBytesSchema,
  /** Per WHMCS action name; entries given here are added to (or replace) the defaults. */
  actionTimeoutsMs: z
    .record(z.string().min(1), PositiveInt)
    .default({})
    .transform((overrides) => ({ ...DEFAULT_ACTION_TIMEOUTS_MS, ...overrides })),
  /** Size of the connection pool: the cap on concurrent calls into WHMCS's PHP workers. */
  connections: PositiveInt.default(16),
  /** WHMCS flags no product as hidden: only these are listed and orderable. */
  publicProductIds: z.array(ProductId).default([]),
  /** The WHMCS gateway module name AddOrder uses (an active one, see GetPaymentMethods). */
  paymentMethod: z.string().min(1).default('banktransfer'),
  acceptOrder: z
    .strictObject({
      /** AddOrder does not provision; accept (and optionally set up) the order right away. */
      enabled: z.boolean().default(false),
      autoSetup: z.boolean().default(true),
      sendEmail: z.boolean().default(false),
    })
    .prefault({}),
  orderKeyField: z
    .strictObject({
      /** The product custom field where AddOrder stores the Idempotency-Key, found by this name. */
      name: z.string().min(1).default('Gateway Idempotency Key'),
      /** Product id → custom field id, for products where the field is not shown on the order form. */
      ids: z.record(ProductId, PositiveInt).default({}),
    })
    .prefault({}),
  /** WHMCS module name → the ModuleCustom func_names allowed for each action. Replaces the default. */
  moduleFunctions: z.record(z.string().min(1), ModuleFunctionsSchema).default({ ...DEFAULT_MODULE_FUNCTIONS }),
  /** A custom API action (not in stock WHMCS) that deletes a service's cancellation request. */
  cancelRevokeAction: z.string().regex(/^[A-Za-z0-9]+$/).default('GatewayDeleteCancelRequest'),
  cancelReason: z.string().min(1).max(500).default('Cancelled through the reseller API'),
  /** IANA zone of the WHMCS server clock, for its "YYYY-MM-DD HH:MM:SS" values (UTC when not set). */
  timeZone: z.string().refine(isTimeZone, 'must be an IANA time zone').optional(),
  productCacheTtlMs: PositiveInt.default(60_000),
  /** Read GetCancelledPackages so that services show a pending cancellation. */
  trackCancellations: z.boolean().default(true),
  /** See CircuitBreakerSchema. */
  circuitBreaker: CircuitBreakerSchema,
  })
  // `doctor` reports a zone left unset: UTC is only a guess at the server's clock.
  .transform((config) => ({ ...config, timeZone: config.timeZone ?? 'UTC', timeZoneConfigured: config.timeZone !== undefined }));

export type WhmcsConfig = z.infer<typeof WhmcsConfigSchema>;
