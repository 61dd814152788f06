/**
 * The stores shared by every gateway instance, in Redis: a standalone server or a Redis Cluster.
 *
 * Nothing waits for Redis: no offline queue, a short command timeout, one retry at most. When Redis
 * is down every store method rejects at once (or within twice the command timeout) with
 * StoreUnavailableError, and the caller decides to fail open or closed.
 */
import { Cluster, Redis } from 'ioredis';
import type { ClusterNode } from 'ioredis';
import { ConfigError } from '../../config.js';
import { StoreUnavailableError } from '../types.js';
import type { Stores } from '../types.js';
import type { OutboxAdmission } from '../webhook-types.js';
import { RedisConnection, replyMessage } from './connection.js';
import type { RedisClient } from './connection.js';
import { DatasetMarker } from './dataset-marker.js';
import { RedisIdempotencyStore } from './idempotency-store.js';
import { RedisKeyStore } from './key-store.js';
import { RedisRateLimitStore } from './rate-limit-store.js';
import { persistenceWarning } from './persistence.js';
import { checkServerVersion } from './server-version.js';
import { RedisWebhookOutbox } from './webhook-outbox.js';
import { RedisWebhookStore } from './webhook-store.js';

export { RedisIdempotencyStore } from './idempotency-store.js';
export { RedisKeyStore } from './key-store.js';
export { RedisRateLimitStore } from './rate-limit-store.js';
export { RedisWebhookStore } from './webhook-store.js';
export { RedisWebhookOutbox } from './webhook-outbox.js';
export { RedisConnection } from './connection.js';
export type { RedisClient } from './connection.js';

interface CommonRedisStoresOptions {
  /** Prefix of every key and of the invalidation channel (`<prefix>key-invalidation`); default `rg:`. */
  keyPrefix?: string;
  /** Per-command timeout, default 500 ms. A whole store call is cut off at twice this. */
  commandTimeoutMs?: number;
  /** How long creation waits for Redis before it gives up; default 5 000 ms. */
  connectTimeoutMs?: number;
  /** Idempotency claims and write-ahead marks wait for this many replicas (WAIT); absent: no wait. */
  replicaAcks?: { replicas: number; timeoutMs: number } | undefined;
  /** Hears what is wrong with the server's configuration (its eviction policy, its persistence; its version on reconnection), at start and on every reconnection. */
  onWarning?: ((message: string) => void) | undefined;
  /** Hears, once each time a reconnection finds it, that Redis lost the data it held (see dataset-marker.ts). */
  onDataLost?: ((message: string) => void) | undefined;
  /** Hears each error a client's connection meets (each failed reconnection while Redis is away or refuses the password), the password cut out. */
  onConnectionError?: ((message: string) => void) | undefined;
  /** webhooks.perAccountConcurrency, maxWaitingPerAccount and claimIdleMs: an account's outbox entries claimable at once, waiting behind them at most, and when parked ones are swept in. */
  webhookAdmission?: (OutboxAdmission & { sweepAfterMs: number }) | undefined;
}

export type RedisStoresOptions = CommonRedisStoresOptions &
  (
    | { /** A standalone server, e.g. `redis://127.0.0.1:6379/0`. */ url: string }
    | { /** Seed nodes of a Redis Cluster, e.g. `{ host, port }` or `"redis://host:port"`. */ clusterNodes: ClusterNode[] }
  );

/** Redis did not answer within the connect time at creation; `lastError` is the client's own reason, the password cut out. */
export class RedisUnreachableError extends StoreUnavailableError {
  constructor(
    readonly waitedMs: number,
    readonly lastError: string | undefined,
  ) {
    super(`Redis was not reachable within ${waitedMs} ms${lastError ? ` (last error: ${lastError})` : ''}`);
  }
}

const DEFAULT_KEY_PREFIX = 'rg:';
const DEFAULT_COMMAND_TIMEOUT_MS = 500;
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
const DATA_LOST =
  'Redis lost its data while the gateway ran (restarted without persistence, flushed, or replaced by an empty server): ' +
  'API keys (their clients get 401), idempotency records (a retried order runs again), webhook endpoints and the events not yet delivered are gone; ' +
  'restore Redis from a backup or issue the keys again, and enable appendonly';
/** One TCP connect attempt; reconnection keeps trying after it. */
const CONNECT_ATTEMPT_TIMEOUT_MS = 1_000;

/**
 * Resolves once connected and subscribed; rejects with RedisUnreachableError when Redis is not there
 * in time, with ConfigError when it is older than the stores need (see server-version.ts).
 */
export async function createRedisStores(options: RedisStoresOptions): Promise<Stores> {
  const keyPrefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX;
  const commandTimeoutMs = options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;

  if (options.replicaAcks && options.replicaAcks.timeoutMs >= commandTimeoutMs) {
    // WAIT blocks its command: past the command timeout every claim would fail as unavailable.
    throw new Error(`replica wait (${options.replicaAcks.timeoutMs} ms) must be shorter than the Redis command timeout (${commandTimeoutMs} ms)`);
  }
  const client = createClient(options, commandTimeoutMs);
  // A subscribed connection can run nothing else, so invalidations get their own. (Two branches
  // because the union's duplicate() signatures cannot be called as one.)
  const subscriber: RedisClient = client instanceof Cluster ? client.duplicate() : client.duplicate();
  const clients = [client, subscriber];
  // The store calls that meet a connection error reject, but only the client's own error says why
  // (a refused password is not the network): the last one is kept for the failure at start, and each
  // is told to onConnectionError. Listened to also so that an unhandled 'error' event cannot crash the process.
  let lastError: string | undefined;
  const withoutPassword = passwordRemover(options);
  for (const each of clients) {
    each.on('error', (error: Error) => {
      lastError = withoutPassword(error.message);
      options.onConnectionError?.(lastError);
    });
  }
  const close = async (): Promise<void> => {
    for (const each of clients) each.disconnect();
  };

  // Whether Redis keeps what the gateway writes: not evicted when full, not lost when it restarts.
  const checkRetention = async (): Promise<void> => {
    for (const warning of [await evictionWarning(client), await persistenceWarning(client)]) if (warning) options.onWarning?.(warning);
  };
  // Met at start, an old server stops the process (ConfigError); met on reconnection, the gateway is
  // serving: every request but the webhook outbox's claims still works, so it is said, not fatal.
  const checkAgain = async (): Promise<void> => {
    const versionWarning = await checkServerVersion(client).catch((error: unknown) => {
      if (error instanceof ConfigError) return error.message;
      throw error;
    });
    if (versionWarning) options.onWarning?.(versionWarning);
    const databaseWarning = await checkDatabase(client).then(() => undefined, (error: unknown) => {
      if (error instanceof ConfigError) return error.message;
      throw error;
    });
    if (databaseWarning) options.onWarning?.(databaseWarning);
    await checkRetention();
  };

  try {
    // Built before connecting: constructing a store loads its scripts, and a missing one must stop here.
    const redis = new RedisConnection(client, keyPrefix, commandTimeoutMs * 2);
    const keys = new RedisKeyStore(redis, subscriber, `${keyPrefix}key-invalidation`);
    const marker = new DatasetMarker(redis);
    const stores: Stores = {
      kind: 'redis',
      rateLimits: new RedisRateLimitStore(redis),
      idempotency: new RedisIdempotencyStore(redis, options.replicaAcks ?? null),
      keys,
      webhooks: new RedisWebhookStore(redis),
      webhookOutbox: new RedisWebhookOutbox(redis, options.webhookAdmission),
      ping: () =>
        redis.run((each) => each.ping()).then(
          () => true,
          () => false,
        ),
      close,
    };
    await withDeadline(connectTimeoutMs, () => lastError, async () => {
      await Promise.all(clients.map(whenReady));
      await checkDatabase(client);
      await connectClusterMasters(client);
      const versionWarning = await checkServerVersion(client);
      if (versionWarning) options.onWarning?.(versionWarning);
      await keys.subscribe();
      await checkRetention();
      await marker.hold();
    });
    // Connected again, perhaps to another server (a failover, a managed Redis's endpoint moved), or
    // to the same one restarted: did it keep its data?
    client.on('ready', () => {
      void marker.lost().then((lost) => lost && options.onDataLost?.(DATA_LOST));
      void checkAgain().catch(() => undefined);
    });
    return stores;
  } catch (error) {
    await close();
    throw error;
  }
}

function createClient(options: RedisStoresOptions, commandTimeoutMs: number): RedisClient {
  // No auto-pipelining: measured under load it halves Redis's CPU per request, but the commands
  // waiting in its pipelines outlive the young generation, so the old one grows by megabytes a
  // second (resident memory +50 MB) and the p99 latency rises (each command waits a turn).
  const connection = {
    commandTimeout: commandTimeoutMs,
    connectTimeout: CONNECT_ATTEMPT_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
    // A command cut off with its connection times out: its caller is told the store is unavailable
    // and acts on it (a write-ahead mark given up, its write not sent). ioredis would otherwise send
    // it again once reconnected, to run behind the caller's back, or a second time.
    autoResendUnfulfilledCommands: false,
    // A failover that demoted this server (the address now names another, a managed Redis's
    // endpoint): connect again rather than have every write refused until a restart. On Redis 6 a
    // script's write refused so comes wrapped in the script's error.
    reconnectOnError: (error: Error) => replyMessage(error.message).startsWith('READONLY'),
  };

  const reconnectDelay = (attempt: number): number => Math.min(attempt * 100, 1_000);
  if ('clusterNodes' in options) {
    return new Cluster(options.clusterNodes, {
      enableOfflineQueue: false,
      clusterRetryStrategy: reconnectDelay,
      redisOptions: connection,
    });
  }
  return new Redis(options.url, { ...connection, enableOfflineQueue: false, retryStrategy: reconnectDelay });
}

function whenReady(client: RedisClient): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => client.once('ready', () => resolve()));
}

/**
 * The database a standalone URL names (`/5`). ioredis SELECTs it on connect, and when the server
 * refuses (a number past its `databases`; a server with database 0 only, as many managed ones) it
 * only emits an error and goes on in database 0: the stores would share another database, unsaid.
 */
async function checkDatabase(client: RedisClient): Promise<void> {
  const database = client instanceof Cluster ? 0 : (client.options.db ?? 0);
  if (database === 0) return;
  await (client as Redis).select(database).catch((error: Error) => {
    if (error.name !== 'ReplyError') throw error;
    throw new ConfigError(
      `invalid configuration:\n  - redisUrl: database ${database}: Redis refused it (${replyMessage(error.message)}); ` +
        "name a database this Redis has (its 'databases' setting; Redis Cluster and many managed services have database 0 only)",
    );
  });
}

/**
 * A cluster client opens its connection to a master on first use and, without an offline queue,
 * refuses commands while that connection is being made; they then bounce off a random node with
 * MOVED. Connecting every master up front keeps the first requests on their way.
 */
async function connectClusterMasters(client: RedisClient): Promise<void> {
  if (client instanceof Cluster) await Promise.all(client.nodes('master').map((node) => node.ping()));
}

/**
 * Any maxmemory-policy but noeviction lets Redis drop keys when full: idempotency records (each has
 * a TTL, so the volatile-* policies take them too; a retried order would run again), outbox entries,
 * API keys. Read from INFO memory, which a managed Redis answers where it refuses CONFIG (and
 * ships an evicting default); a policy no node would say is reported as unknown, not taken as fine.
 */
async function evictionWarning(client: RedisClient): Promise<string | undefined> {
  const nodes = client instanceof Cluster ? client.nodes('master') : [client];
  const policies = new Set(await Promise.all(nodes.map(maxmemoryPolicy)));
  policies.delete('noeviction');
  if (policies.size === 0) return undefined;
  const said = [...policies].map((policy) => policy ?? 'unknown (neither INFO memory nor CONFIG GET answered it)').join(', ');
  return `Redis maxmemory-policy is ${said}: at maxmemory any policy but noeviction evicts idempotency records, webhook outbox entries and API keys; set it to noeviction`;
}

/** INFO memory's `maxmemory_policy` (Redis 3.2 on), else CONFIG GET; undefined when neither says. */
async function maxmemoryPolicy(node: Redis): Promise<string | undefined> {
  const info = await node.info('memory').catch(() => '');
  const field = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
  if (field) return field;
  const reply = await node.config('GET', 'maxmemory-policy').catch(() => []);
  return reply[1];
}

async function withDeadline(timeoutMs: number, lastError: () => string | undefined, work: () => Promise<void>): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new RedisUnreachableError(timeoutMs, lastError())), timeoutMs);
  });
  try {
    await Promise.race([work(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Cuts the configured password (if any) out of a client error's message, should Redis or ioredis ever echo it. */
function passwordRemover(options: RedisStoresOptions): (message: string) => string {
  let password = '';
  try {
    if ('url' in options) password = decodeURIComponent(new URL(options.url).password);
  } catch {
    // No URL to read a password from: none to cut out.
  }
  return (message) => (password ? message.split(password).join('[redacted]') : message);
}
