/**
 * How the process starts when no upstream is configured. A production image must never fall into
 * the sandbox by accident (it would serve demo data and could print keys on a public address), so
 * the sandbox runs only when asked with SANDBOX=1; otherwise start-up stops with EX_CONFIG and says
 * what to set. `npm start` asks for it (scripts/start.mjs) so a fresh checkout still gets the demo.
 */
import { isIP } from 'node:net';
import type { BackendRegistry } from '../backend/registry.js';

type Env = Record<string, string | undefined>;

export const EX_CONFIG = 78;

/** What to set, per registered backend, read from the backends' own environment variables. */
export function noUpstreamMessage(registry: BackendRegistry): string {
  const backends = registry.map(
    (plugin) => `    BACKEND=${plugin.name}: ${plugin.env.map((variable) => variable.name).join(', ')}`,
  );
  return [
    'no upstream is configured, and the sandbox was not asked for.',
    '  For a gateway: pick a backend and set its variables, with KEY_PEPPER, WEBHOOK_ENCRYPTION_KEY and REDIS_URL:',
    ...backends,
    '  or CONFIG_FILE=<a JSON file with an "upstream" section; see config/production.example.json>.',
    '  For the demo sandbox (a simulator of the backend, demo keys): set SANDBOX=1.',
  ].join('\n');
}

/** A flag variable is on when set to 1 or true (any other value, or none, is off). */
export function flag(env: Env, name: string): boolean {
  return ['1', 'true'].includes((env[name] ?? '').toLowerCase());
}

export function sandboxRequested(env: Env): boolean {
  return flag(env, 'SANDBOX');
}

/** True when only this machine can reach the listen address. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  return bare === '::1';
}

/**
 * Demo keys are printed only where nobody else can use them: on a loopback address, or on any
 * address when the operator asks with SANDBOX_PRINT_KEYS=1.
 */
export function mayPrintDemoKeys(host: string, env: Env): boolean {
  return isLoopbackHost(host) || flag(env, 'SANDBOX_PRINT_KEYS');
}
