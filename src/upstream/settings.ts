/**
 * What every backend's config section holds for its upstream client (its origin, pool, connect
 * deadline and circuit breaker), and what the gateway or a test passes to a mapping's client
 * besides its config: one way from both to the client's options, whichever the backend.
 */
import type { Dispatcher } from 'undici';
import { z } from 'zod';
import type { BackendLogger } from '../backend/logger.js';
import type { UpstreamClientOptions } from './client.js';
import type { CredentialHold } from './credential-hold.js';
import type { UpstreamHooks } from './observer.js';

/**
 * An upstream's base URL. A user name or password in it would never be sent (the pool connects to
 * the origin; each backend has its own credential fields), and would be printed wherever the URL
 * is: refused at boot instead.
 */
export const UpstreamUrlSchema = z
  // abort: the check below parses the URL, so it runs only on one that passed.
  .url({ protocol: /^https?$/, abort: true })
  .refine((url) => { const parsed = new URL(url); return parsed.username === '' && parsed.password === ''; }, 'must not carry a user name or password (each backend has its own credential fields)');

/**
 * Fail fast while the upstream is down: after `failureThreshold` consecutive calls that found it
 * unreachable, timed out, lost the connection or got a 429/502/503/504, every call fails at once
 * (503, nothing sent) for `openMs`; then one trial call decides. Business errors, 403s and other
 * answers do not count, and any of them resets the count (breaker.ts).
 */
export const CircuitBreakerSchema = z
  .strictObject({
    enabled: z.boolean().default(true),
    failureThreshold: z.number().int().positive().default(5),
    openMs: z.number().int().positive().default(10_000),
  })
  .prefault({});

/**
 * The largest answer read from the upstream; a larger one is dropped (502) before it fills memory.
 * The whole catalog comes in one answer (neither WHMCS's GetProducts nor FOSSBilling's product list
 * filters out what is not sold), and configurable options priced in several currencies make it
 * grow fast: raise this for a catalog that reaches it.
 */
export const MaxResponseBytesSchema = z.number().int().min(64 * 1024).max(256 * 1024 * 1024).default(5 * 1024 * 1024);

/** The settings of a backend's section that shape its client. */
export interface UpstreamSettings {
  /** The upstream's base URL: its origin is where the pool connects. */
  url: string;
  /** Size of the connection pool. */
  connections: number;
  /** A connection that is not up by then fails as `unavailable` (nothing was sent). */
  connectTimeoutMs: number;
  maxResponseBytes: number;
  circuitBreaker: z.infer<typeof CircuitBreakerSchema>;
}

/** What a mapping's client takes besides its config: what tests inject, what the gateway hooks in. */
export interface UpstreamWiring {
  /** Replaces the client's own Pool (tests pass an undici MockAgent); the caller closes it. */
  dispatcher?: Dispatcher;
  logger?: BackendLogger;
  /** The clock of the circuit breaker and the answer cache (tests inject one); call deadlines always use real time. */
  now?: () => number;
  /** The gateway's metrics observer. */
  hooks?: UpstreamHooks;
  /** Another client's credential hold, shared (UpstreamClientOptions.credentialHold). */
  credentialHold?: CredentialHold;
}

export function upstreamClientOptions(settings: UpstreamSettings, wiring: UpstreamWiring): UpstreamClientOptions {
  return {
    origin: new URL(settings.url).origin,
    connections: settings.connections,
    connectTimeoutMs: settings.connectTimeoutMs,
    maxResponseBytes: settings.maxResponseBytes,
    circuitBreaker: settings.circuitBreaker,
    dispatcher: wiring.dispatcher,
    logger: wiring.logger,
    now: wiring.now,
    credentialHold: wiring.credentialHold,
    ...wiring.hooks,
  };
}
