/**
 * What a backend brings to the gateway. Backends register at the edge (`mappings/index.ts`); the core
 * knows them only through this shape, so adding one touches no file under src/. Two kinds: a mapping
 * (`BackendPlugin`: a Backend the routes call) and a forwarder (`ForwardingPlugin`: the upstream
 * already speaks v1, and each request is passed on after the local gates).
 */
import type { z } from 'zod';
import type { Forwarder } from '../http/forwarding.js';
import type { Backend } from './backend.js';
import type { UpstreamHooks } from '../upstream/observer.js';
import type { BackendLogger } from './logger.js';

/** An environment variable that sets a field of the backend's config section. */
export interface BackendEnvVar {
  name: string;
  /** Path inside the backend's section, e.g. `['url']` for `upstream.whmcs.url`. */
  path: string[];
  kind: 'string' | 'int' | 'list';
}

/** Ways a local upstream can be told to fail; none of them performs the call. */
export type SandboxFaultKind =
  /** HTTP 500 with an HTML body. */
  | 'http500'
  /** HTTP 200 with an HTML page instead of an API answer. */
  | 'html'
  /** No answer ever. */
  | 'hang'
  /** The connection is destroyed before anything happens. */
  | 'reset';

/** The local upstream's fault injection, the same for every backend (the end-to-end suite uses it). */
export interface SandboxFaults {
  /** From now on every upstream call fails this way, until `clear()`. */
  inject(kind: SandboxFaultKind): void;
  clear(): void;
}

/** An upstream started for the sandbox: a simulator, or a second gateway. */
export interface SandboxUpstream<Config> {
  /** The backend's config section pointing at it. */
  config: Config;
  /** The accounts' upstream customer ids that hold the demo data, in the order of the demo accounts. */
  customerIds: readonly [string, string];
  faults: SandboxFaults;
  close(): Promise<void>;
}

export interface SandboxOptions {
  /** Added to every upstream call (demos of a slow backend). */
  latencyMs?: number;
  /** The profile of the gateway in front: an upstream that is a gateway itself runs the same one. */
  profile?: 'A' | 'B';
}

/** What both kinds of plugin declare. */
interface PluginBase<Config> {
  /** The value of `upstream.backend` and the name of the config section under `upstream`. */
  name: string;
  /** Validates the backend's config section (defaults applied). */
  configSchema: z.ZodType<Config>;
  env: readonly BackendEnvVar[];
  /** Where it talks to, for the start-up line: never a credential. */
  describe(config: Config): string;
  /**
   * Why `upstreamId` names none of this backend's customers (`must be …`), checked where an operator
   * maps an account (admin API, key CLI): the mapping would refuse it on every request. Undefined when it may.
   */
  upstreamIdProblem(upstreamId: string): string | undefined;
  /**
   * Starts a local upstream for sandbox mode. Loaded lazily, so a production gateway never loads
   * simulator code.
   */
  sandbox(options: SandboxOptions): Promise<SandboxUpstream<Config>>;
}

/** `hooks` (metrics observer, trace headers) go to whatever calls the upstream. */
export interface PluginDeps {
  logger: BackendLogger;
  hooks?: UpstreamHooks;
}

/** A mapping: the routes call its Backend, which translates to the upstream's own API. */
export interface BackendPlugin<Config = unknown> extends PluginBase<Config> {
  kind?: 'maps';
  create(config: Config, deps: PluginDeps): Backend;
}

/**
 * A forwarder: the upstream speaks v1 itself. Keys, scopes, limits, validation and idempotency stay
 * local; each request that passes them is forwarded (src/http/forwarding.ts). There is no Backend.
 */
export interface ForwardingPlugin<Config = unknown> extends PluginBase<Config> {
  kind: 'forwards';
  create(config: Config, deps: PluginDeps): Forwarder;
}

export type UpstreamPlugin<Config = unknown> = BackendPlugin<Config> | ForwardingPlugin<Config>;

export type BackendRegistry = readonly UpstreamPlugin<any>[];

/** The named backend's check of an account's upstream id (PluginBase.upstreamIdProblem); none for a backend not registered. */
export function upstreamIdCheck(registry: BackendRegistry | undefined, backend: string): (upstreamId: string) => string | undefined {
  const plugin = registry?.find((candidate) => candidate.name === backend);
  return (upstreamId) => plugin?.upstreamIdProblem(upstreamId);
}
