/**
 * Gateway configuration: a JSON file under config/ plus environment variables (read by
 * load-config.ts), validated once at boot. A bad config stops the process with a message that
 * names every wrong field.
 */
import { isIP } from 'node:net';
import proxyAddr from '@fastify/proxy-addr';
import { z } from 'zod';
import { AdminConfigSchema } from './admin/tokens.js';
import type { BackendRegistry } from './backend/registry.js';
import { LONGEST_LOG_WINDOW_MS } from './stores/rate-policies.js';
import { MAX_WAITING_PER_ACCOUNT } from './stores/webhook-types.js';

const PositiveInt = z.number().int().positive();

/** What @fastify/proxy-addr (Fastify's trustProxy) takes: an address, a CIDR range, or one of its names. */
function isProxyAddress(value: string): boolean {
  try {
    proxyAddr.compile(value);
    return true;
  } catch {
    return false;
  }
}

/**
 * A REDIS_URL ioredis reads as a server: redis:// or rediss://, its path a database number. zod runs
 * this even when `.url()` has already failed, so it must not throw: `new URL` would, and its error
 * carries the whole URL, password included (`input`).
 */
function isRedisUrl(text: string): boolean {
  if (!URL.canParse(text)) return true; // `.url()` has reported it, without quoting it
  const url = new URL(text);
  return /^rediss?:$/.test(url.protocol) && /^\/?\d*$/.test(url.pathname);
}

/**
 * What listen resolves (getaddrinfo: /etc/hosts, DNS): labels of letters, digits, '-' and '_' (a
 * Docker Compose container name, `app_gateway_1`), none starting or ending with '-'. An IPv6
 * address with a zone id (`fe80::1%eth0`), which Node listens on, is an IP address (net.isIP).
 */
const HOST_NAME = /^(?=.{1,253}$)(?!-)[A-Za-z0-9_-]{1,63}(?<!-)(?:\.(?!-)[A-Za-z0-9_-]{1,63}(?<!-))*\.?$/;
/**
 * An address to listen on: an IP address or a host name, without port or scheme (`host:3000` or
 * `[::1]` failed only at listen, with exit 1 and a stack, instead of naming the field).
 */
const ListenHost = z.string().refine((host) => isIP(host) !== 0 || HOST_NAME.test(host), {
  error: 'must be an IP address or a host name, without port or scheme (0.0.0.0, ::, gateway.internal)',
});

/** A Redis Cluster seed, `host:port` (`[v6 address]:port`, optionally `redis://` in front); the port defaults to 6379. */
const CLUSTER_SEED = /^(?:redis:\/\/)?(\[[0-9A-Fa-f:.]+\]|[^\s:/@[\]]+)(?::(\d{1,5}))?$/;

export function parseClusterSeed(seed: string): { host: string; port: number } | undefined {
  const match = CLUSTER_SEED.exec(seed);
  if (!match) return undefined;
  const port = match[2] === undefined ? 6379 : Number(match[2]);
  if (port < 1 || port > 65_535) return undefined;
  return { host: (match[1] as string).replace(/^\[|\]$/g, ''), port };
}

export const RateLimitConfigSchema = z.strictObject({
  keyPerMinute: PositiveInt.default(60),
  keyBurst: z.number().int().min(0).default(20),
  keyPerDay: PositiveInt.default(5000),
  /** Profile A only; ignored in Profile B, which has no account limit. */
  accountPerMinute: PositiveInt.default(120),
  ipPerMinute: PositiveInt.default(600),
  /**
   * IPv6 sources are counted per network of this prefix length: one client usually holds a whole
   * /64 and could otherwise take a fresh address, and a fresh budget, for every request.
   */
  ipv6PrefixLength: z.number().int().min(1).max(128).default(64),
  /**
   * Length of the "minute" windows; shorter only in tests and demos, and at most what the stores
   * keep (LONGEST_LOG_WINDOW_MS, 12 days).
   */
  windowMs: PositiveInt.max(LONGEST_LOG_WINDOW_MS, `must be at most ${LONGEST_LOG_WINDOW_MS} ms (12 days)`).default(60_000),
  /** When the store is down: `open` falls back to a per-instance memory limiter, `closed` answers 503. */
  onStoreError: z.enum(['open', 'closed']).default('open'),
});

export const IdempotencyConfigSchema = z.strictObject({
  /** Profile A: replays within this age; after it, 410 replay_stale. */
  replayWindowMs: PositiveInt.default(3_600_000),
  /** Profile A: how long a stale key is remembered so that it can answer 410. */
  staleRetentionMs: PositiveInt.default(7 * 24 * 3_600_000),
  /** Profile B: records live this long, then the key is new again. */
  profileBWindowMs: PositiveInt.default(24 * 3_600_000),
  /** Added to the slowest upstream write (or requestDeadlineMs, when shorter) to form the claim's lease. */
  leaseMarginMs: PositiveInt.default(5_000),
  /**
   * After a write was sent, how long upstream may still be working on it: no retry reconciles
   * (or sends again) before. Unset: the backend's write timeout + leaseMarginMs. Never shorter
   * than the write timeout (checked at boot).
   */
  settleMs: PositiveInt.optional(),
  /**
   * Redis with replicas: claims and write-ahead marks wait (WAIT) for this many replicas, at most
   * replicaWaitMs (below the 500 ms Redis command timeout); fewer answers 503 store_unavailable
   * and sends nothing. 0: no wait.
   */
  replicaAcks: z.number().int().min(0).default(0),
  replicaWaitMs: PositiveInt.max(400).default(100),
  /**
   * Memory stores (no Redis): records held at most, each until it expires, one account at most a
   * quarter of them. With this many live, a new key answers 503 store_unavailable and sends
   * nothing; none is forgotten early.
   */
  memoryMaxRecords: PositiveInt.default(50_000),
}).refine((windows) => windows.staleRetentionMs > windows.replayWindowMs, {
  // A stale key is one older than the replay window: kept no longer than that, none would ever answer 410.
  path: ['staleRetentionMs'],
  message: 'must be longer than replayWindowMs (a key past its replay window is remembered this long to answer 410)',
});

/**
 * Which backend serves, and its own section (`upstream.<backend>`), which the backend's plugin
 * validates (see parseConfig). Without the section the gateway runs that backend's sandbox.
 */
export const UpstreamSelectionSchema = z.looseObject({ backend: z.string().min(1) });

/** A webhook encryption key: 32 bytes, base64. */
const SealingKey = z.string().refine((value) => Buffer.from(value, 'base64').length === 32, 'must be 32 random bytes, base64-encoded');

export const WebhookConfigSchema = z.strictObject({
  /**
   * Lets URLs use http and point at loopback or private addresses. Unset: true in sandbox mode
   * only (a developer's receiver on 127.0.0.1), false everywhere else.
   */
  allowPrivateTargets: z.boolean().optional(),
  /**
   * The ports a webhook URL may use, checked at registration and again at each delivery (reference
   * S1: 443 only, or an explicit list such as 443 and 8443). Any port with allowPrivateTargets.
   */
  allowedPorts: z.array(z.number().int().min(1).max(65_535)).min(1).default([443]),
  /** Encrypts webhook secrets at rest: 32 bytes, base64. Required outside sandbox mode. */
  encryptionKey: SealingKey.optional(),
  /**
   * Keys the secrets may still be sealed with after a rotation (newest first): they open them, and
   * `reseller-keys webhook-secrets reseal` seals them again with encryptionKey. Nothing new is sealed with them.
   */
  previousEncryptionKeys: z.array(SealingKey).default([]),
  /**
   * Delay before each attempt (the first is usually 0); after the last one the event is failed.
   * The default is reference W6's: 0, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h.
   */
  retryScheduleMs: z
    .array(z.number().int().min(0))
    .min(1)
    .default([0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 50_400_000, 72_000_000, 86_400_000]),
  /**
   * Each retry's delay is the schedule's step moved by up to this fraction either way (0.2: ±20 %),
   * so that the events a receiver's outage failed together do not all come back at once.
   */
  retryJitter: z.number().min(0).max(0.5).default(0.2),
  /** An endpoint whose deliveries have all failed for this long is disabled. */
  disableAfterMs: PositiveInt.default(5 * 24 * 3_600_000),
  /** How often the change detector reads each account's orders, services and invoices. */
  pollIntervalMs: PositiveInt.default(60_000),
  /** How often the delivery worker looks for due deliveries (new events wake it at once). */
  workerIntervalMs: PositiveInt.default(500),
  /**
   * A delivery claimed by an instance that has not finished it for this long is taken over. Above a
   * whole attempt (host lookup up to about 3 s, request up to 15 s), or one in flight is sent twice.
   */
  claimIdleMs: z.number().int().min(20_000, 'must be at least 20000 (longer than a whole delivery attempt)').default(30_000),
  /** Deliveries in flight per instance. */
  concurrency: PositiveInt.default(8),
  /**
   * Deliveries in flight per account, across all instances (reference S7), so that one account's
   * slow receiver cannot take every slot and no receiver gets more at once as instances are added;
   * what it has beyond that waits in the outbox.
   */
  perAccountConcurrency: PositiveInt.default(2),
  /**
   * An account's events waiting behind its share at most (a receiver that hangs or crawls for
   * days); a new one beyond that is not kept: counted lost (`backlog_full`) and listed as dropped.
   */
  maxWaitingPerAccount: PositiveInt.default(MAX_WAITING_PER_ACCOUNT),
});

export const IssuerSchema = z.strictObject({
  name: z.string().min(1).default('Example Hosting Ltd.'),
  addressLines: z.array(z.string()).default([]),
  email: z.string().optional(),
  taxId: z.string().optional(),
  footer: z.string().optional(),
});

export const ConfigSchema = z.strictObject({
  /**
   * Processes serving the public port (node:cluster, one port): a number, or `auto` for one per
   * CPU core. More than one needs the Redis stores (state must be shared between them).
   */
  // `auto`, or a whole number written plainly: `1e3`, `0x2` and ` 2` are refused (coercion took them).
  workers: z
    .union([z.literal('auto'), z.string().regex(/^[1-9][0-9]*$/).transform(Number), z.number()], {
      error: 'must be auto or a whole number of processes (1, 2, …)',
    })
    .pipe(z.union([z.literal('auto'), z.number().int().min(1).max(1024, 'must be at most 1024 processes')]))
    .default(1),
  host: ListenHost.default('127.0.0.1'),
  port: z.number().int().min(0).max(65535).default(3000),
  profile: z.enum(['A', 'B']).default('A'),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Proxies whose X-Forwarded-For is believed (IPs or CIDRs). Anyone else's is ignored. */
  trustedProxies: z
    .array(z.string().refine(isProxyAddress, 'must be an IP address, a CIDR range (10.0.0.0/8) or loopback, linklocal, uniquelocal'))
    .default([]),
  bodyLimitBytes: PositiveInt.default(64 * 1024),
  /**
   * How long an idle keep-alive connection stays open after an answer (Fastify's default). Behind a
   * load balancer it must be longer than the balancer's idle timeout: else the balancer reuses a
   * connection the gateway is closing, and its client gets a 502.
   */
  keepAliveTimeoutMs: PositiveInt.default(72_000),
  /**
   * How long SIGTERM waits for requests in flight before the process exits anyway. An abandoned
   * write is not lost: its idempotency claim expires and a retry reconciles.
   */
  shutdownGraceMs: PositiveInt.default(30_000),
  /**
   * The most a request may take upstream, from its arrival: each upstream call it makes gets what
   * is left (at most its own timeout), and one with less than a second left is not sent (504, with
   * Retry-After; a write not sent leaves its Idempotency-Key free). Behind a load balancer, set it
   * below the balancer's timeout. The default keeps a 90 s module call whole after its reads.
   */
  requestDeadlineMs: z.number().int().min(2_000).default(120_000),
  /** The absolute URL integrators use (OpenAPI `servers`, the default problemTypeBase); default: derived from host and port. */
  publicBaseUrl: z.url({ protocol: /^https?$/ }).optional(),
  /**
   * Base of the Problem `type` URIs; each type is this plus the reason. A base written without a
   * separator at its end (`https://api.example.com/problems`) gets a `/`: else every type would
   * run into the reason (`…/problemsnot_found`) instead of ending in it (contract §2). Not given,
   * it is defaultProblemTypeBase's.
   */
  problemTypeBase: z
    .string()
    .url()
    .transform((base) => (/[/#:]$/.test(base) ? base : `${base}/`))
    .optional(),
  redisUrl: z
    .string()
    .url()
    // Read by ioredis: a database other than a number (`/cache`) was an uncaught error in the key CLI.
    .refine(isRedisUrl, 'must be redis://[user:password@]host[:port][/database number] (or rediss://)')
    .optional(),
  /** Redis Cluster seed nodes (`host:port`); when set, used instead of redisUrl. */
  redisClusterNodes: z
    .array(z.string().refine((seed) => parseClusterSeed(seed) !== undefined, 'must be host:port (an IPv6 address in brackets: [fd00::1]:7000)'))
    .optional(),
  keys: z
    .strictObject({
      /** Server secret mixed into every key hash. Required outside sandbox mode. */
      pepper: z.string().min(32).optional(),
      /**
       * Peppers keys may still be hashed with after a rotation (newest first): a key that fails with
       * the pepper but matches one of these authenticates, and its hash is made again with the pepper.
       */
      previousPeppers: z.array(z.string().min(32)).default([]),
      /** Memory mode: where keys persist, so the CLI and a running gateway share them. */
      file: z.string().default('data/keys.json'),
      cacheTtlMs: PositiveInt.default(60_000),
      /**
       * While the key store is unreachable, a key this instance read from it within this time keeps
       * authenticating (reads go on through a Redis outage); older or never-seen keys answer 503.
       */
      staleIfErrorMs: z.number().int().min(0).default(600_000),
      /**
       * New keys end in their checksum. The release before checksums refuses such a key (401): turn
       * it on once none of its instances is left, and no rollback to it is planned.
       */
      issueChecksums: z.boolean().default(false),
    })
    .prefault({}),
  rateLimits: RateLimitConfigSchema.prefault({}),
  idempotency: IdempotencyConfigSchema.prefault({}),
  audit: z.strictObject({ file: z.string().default('data/audit.log') }).prefault({}),
  /** The backend's self-checks (`npm run doctor`), also run in the gateway without holding up start-up. */
  doctor: z
    .strictObject({
      /** Run the checks at start-up (logged; failing ones can stop orders, see README). */
      enabled: z.boolean().default(true),
      /** Run them again this often; 0 disables the re-runs. */
      intervalMs: z.number().int().min(0).default(300_000),
    })
    .prefault({}),
  issuer: IssuerSchema.prefault({}),
  /** Invoice PDFs, rendered on threads apart from the event loop (src/pdf/render-pool.ts). */
  pdf: z
    .strictObject({
      /** Threads rendering at once, each started at its first render and kept (pdf-lib and a render's heap each). */
      renderThreads: z.number().int().min(1).max(64).default(1),
      /** Renders waiting for a thread; past them a PDF request answers 503 renderer_busy. */
      renderQueue: z.number().int().min(0).max(10_000).default(8),
      /** Each render thread's heap cap (MB): a render past it answers 500 renderer_out_of_memory, its thread replaced. */
      renderMemoryMb: z.number().int().min(64).max(16_384).default(256),
      /**
       * Font families for the scripts the bundled DejaVu Sans lacks (CJK, Indic, Thai…), tried after it
       * in order: single TrueType or OpenType files (not .ttc collections), loaded and checked at boot.
       */
      fonts: z
        .array(z.strictObject({ regular: z.string().min(1), bold: z.string().min(1).optional() }))
        .max(8)
        .default([]),
    })
    .prefault({}),
  /** The operations listener (metrics, probes): apart from the public port, loopback by default. */
  ops: z
    .strictObject({
      host: ListenHost.default('127.0.0.1'),
      port: z.number().int().min(0).max(65535).default(9464),
      /**
       * At SIGTERM /readyz answers 503 at once; the public listener keeps serving this long before
       * it drains, so that load balancers stop sending first. Counted before shutdownGraceMs.
       */
      unreadyDelayMs: z.number().int().min(0).default(0),
      /**
       * Whether an upstream that does not answer makes /readyz 503. Off: it is reported in the
       * checks, and the gateway keeps answering (503 `upstream_unavailable` where it must call it).
       * On: for a balancer that fails over to instances in front of another upstream.
       */
      readyRequiresUpstream: z.boolean().default(false),
    })
    .prefault({}),
  webhooks: WebhookConfigSchema.prefault({}),
  /** The admin API on the ops listener (src/admin/); off while no token is configured. */
  admin: AdminConfigSchema.prefault({}),
  /** Absent, or without the backend's section: the process stops (EX_CONFIG) unless SANDBOX=1 asks for
   * the sandbox (a local upstream, demo keys; src/startup/mode.ts). */
  upstream: UpstreamSelectionSchema.optional(),
}).transform((config) => ({ ...config, problemTypeBase: config.problemTypeBase ?? defaultProblemTypeBase(config.publicBaseUrl) }));

/** Where problem types point when neither `problemTypeBase` nor `publicBaseUrl` is configured. */
const UNSERVED_PROBLEM_TYPE_BASE = 'https://reseller-gateway.dev/problems/';

/**
 * The default base of problem `type` URIs: the gateway's own pages (GET /problems/{reason}) under
 * `publicBaseUrl`, so that a type resolves to its documentation (RFC 9457 §3.1.1). Without
 * publicBaseUrl the gateway cannot know its address; the types then name a base nobody serves.
 */
export function defaultProblemTypeBase(publicBaseUrl?: string): string {
  return publicBaseUrl ? `${publicBaseUrl.replace(/\/+$/, '')}/problems/` : UNSERVED_PROBLEM_TYPE_BASE;
}

export type GatewayConfig = z.infer<typeof ConfigSchema>;
export type UpstreamConfig = z.infer<typeof UpstreamSelectionSchema>;
/** A config whose upstream is chosen and configured: what the app is built from. */
export type ResolvedConfig = GatewayConfig & { upstream: UpstreamConfig };
export type Profile = GatewayConfig['profile'];

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

function describeIssues(error: z.ZodError): string {
  return error.issues.map((issue) => `  - ${issue.path.join('.') || '(root)'}: ${issue.message}`).join('\n');
}

/**
 * The backend's own section, validated by its plugin; its issues are named by their full path.
 * Returns the section as parsed, or the lines that say what is wrong.
 */
function parseUpstream(upstream: UpstreamConfig, registry: BackendRegistry): { upstream: UpstreamConfig } | { issues: string[] } {
  const plugin = registry.find((candidate) => candidate.name === upstream.backend);
  const known = registry.map((candidate) => candidate.name).join(', ');
  if (!plugin) return { issues: [`  - upstream.backend: unknown backend "${upstream.backend}"; known: ${known}`] };
  const strays = Object.keys(upstream).filter((key) => key !== 'backend' && key !== plugin.name);
  if (strays.length > 0) {
    return { issues: strays.map((key) => `  - upstream.${key}: not a setting of backend "${plugin.name}" (its section is upstream.${plugin.name})`) };
  }
  const section = upstream[plugin.name];
  if (section === undefined) return { upstream };
  const result = plugin.configSchema.safeParse(section);
  if (!result.success) return { issues: result.error.issues.map((issue) => `  - ${['upstream', plugin.name, ...issue.path].join('.')}: ${issue.message}`) };
  return { upstream: { backend: plugin.name, [plugin.name]: result.data } };
}

/** True when the config names an upstream to serve; else the gateway runs a sandbox. */
export function hasUpstream(config: GatewayConfig): config is ResolvedConfig {
  return config.upstream !== undefined && config.upstream[config.upstream.backend] !== undefined;
}

/**
 * Validates a raw config object (file contents with environment applied). Every wrong field is
 * named at once: the backend's section and the secrets an upstream needs are checked even when the
 * rest has errors, so that fixing one does not only reveal the next.
 */
export function parseConfig(raw: unknown, registry: BackendRegistry): GatewayConfig {
  const result = ConfigSchema.safeParse(raw);
  const issues = result.success ? [] : describeIssues(result.error).split('\n');
  const given = (typeof raw === 'object' && raw !== null ? raw : {}) as { upstream?: unknown; keys?: { pepper?: unknown }; webhooks?: { encryptionKey?: unknown } };
  const selection = result.success ? result.data.upstream : UpstreamSelectionSchema.safeParse(given.upstream).data;
  let upstream: UpstreamConfig | undefined;
  if (selection) {
    const parsed = parseUpstream(selection, registry);
    if ('issues' in parsed) issues.push(...parsed.issues);
    else upstream = parsed.upstream;
  }
  // An upstream section given (valid or not) means production: its secrets are required too.
  if (selection !== undefined && selection[selection.backend] !== undefined) {
    const pepper = result.success ? result.data.keys.pepper : given.keys?.pepper;
    const encryptionKey = result.success ? result.data.webhooks.encryptionKey : given.webhooks?.encryptionKey;
    if (!pepper) issues.push('  - keys.pepper: required when an upstream is configured (set KEY_PEPPER)');
    if (!encryptionKey) issues.push('  - webhooks.encryptionKey: required when an upstream is configured (set WEBHOOK_ENCRYPTION_KEY)');
  }
  if (!result.success || issues.length > 0) throw new ConfigError(`invalid configuration:\n${issues.join('\n')}`);
  const config = result.data;
  if (upstream) config.upstream = upstream;
  return config;
}
