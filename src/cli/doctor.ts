/**
 * `reseller-doctor` (`npm run doctor`): checks the configured upstream before the gateway trusts
 * it, with the gateway's own config (CONFIG_FILE and the environment). Each check prints pass or
 * fail and, when it fails, the fix. Changes nothing upstream. With Redis configured, also reads
 * what the gateway's start-up would warn of it (src/doctor/redis-check.ts). Exit codes: see DOCTOR_EXIT.
 *
 *   reseller-doctor [--json]
 */
import { parseArgs } from 'node:util';
import pino from 'pino';
import type { DoctorCheck } from '../backend/backend.js';
import { createUpstream, describeUpstream, linkOf, type Upstream } from '../backend/factory.js';
import type { BackendRegistry } from '../backend/registry.js';
import { ConfigError, hasUpstream, type GatewayConfig, type ResolvedConfig } from '../config.js';
import { loadConfig } from '../load-config.js';
import { redisCheck } from '../doctor/redis-check.js';
import { DOCTOR_EXIT, formatJson, formatText, summarize } from '../doctor/report.js';
import { startSandbox, type Sandbox } from '../sandbox.js';
import { PROFILE_ACTIONS } from '../v1/schemas.js';
import { processIo, type CliIo } from './io.js';

const USAGE = `usage: reseller-doctor [--json] [--help]

Checks the upstream configured for the gateway (CONFIG_FILE, default config/gateway.json, and the
environment: BACKEND and its variables, e.g. WHMCS_URL, WHMCS_IDENTIFIER, WHMCS_SECRET, or
FOSSBILLING_URL, FOSSBILLING_API_TOKEN). Nothing is changed upstream. With REDIS_URL (or
REDIS_CLUSTER_NODES) set, also whether that Redis keeps what the gateway writes (no eviction,
persistence).

  --json   machine-readable output: {"ok", "exit_code", "backend", "counts", "checks": [...]}
  --help   this text

exit codes:
  ${DOCTOR_EXIT.ok}   every check passed
  ${DOCTOR_EXIT.failed}   a check failed or could not run (SKIP), or doctor crashed
  ${DOCTOR_EXIT.usage}   bad command line
  ${DOCTOR_EXIT.unverified}   nothing failed, but some checks could not be verified (WARN)
  ${DOCTOR_EXIT.config}  the configuration is invalid
`;

interface Options {
  json: boolean;
}

function parseOptions(argv: string[]): Options | 'help' {
  const { values } = parseArgs({ args: argv, options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } } });
  return values.help ? 'help' : { json: values.json === true };
}

/** The gateway's config; without an upstream (sandbox mode), the embedded simulator is checked. */
async function resolveUpstream(loaded: GatewayConfig, registry: BackendRegistry): Promise<{ config: ResolvedConfig; sandbox?: Sandbox }> {
  if (hasUpstream(loaded)) return { config: loaded };
  const sandbox = await startSandbox(loaded, registry);
  return { config: sandbox.config, sandbox };
}

/** A forwarder has no checks: the upstream gateway checks its own billing backend. */
async function diagnose(upstream: Upstream, config: ResolvedConfig): Promise<DoctorCheck[]> {
  if (upstream.kind === 'forwards' || !upstream.backend.diagnose) return [];
  return upstream.backend.diagnose({ serviceActions: PROFILE_ACTIONS[config.profile] });
}

/**
 * The doctor on `argv`: its exit code. The entry (bin/reseller-doctor.ts, runDoctorCli) runs it on
 * the process; tests run it in theirs.
 */
export async function doctorCli(registry: BackendRegistry, argv: string[], io: CliIo = processIo): Promise<number> {
  let options: Options | 'help';
  try {
    options = parseOptions(argv);
  } catch (error) {
    io.err(`reseller-doctor: ${(error as Error).message}\n${USAGE}`);
    return DOCTOR_EXIT.usage;
  }
  if (options === 'help') {
    io.out(USAGE);
    return DOCTOR_EXIT.ok;
  }
  let loaded: GatewayConfig;
  try {
    loaded = loadConfig(registry, io.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.err(`reseller-doctor: ${error.message}\n`);
    return DOCTOR_EXIT.config;
  }
  const { config, sandbox } = await resolveUpstream(loaded, registry);
  // The report is the output; the mapping's own log lines would only repeat it.
  const upstream = createUpstream(config, registry, pino({ level: 'silent' }));
  const backend = linkOf(upstream);
  try {
    const redis = await redisCheck(config);
    const checks = [...(await diagnose(upstream, config)), ...(redis ? [redis] : [])];
    const where = sandbox ? `the sandbox upstream, ${sandbox.upstream} (no upstream is configured)` : `the upstream, ${describeUpstream(config, registry)}`;
    const heading = `reseller-doctor: checking ${where} (profile ${config.profile})`;
    if (options.json) {
      // A script reads the same object whether or not the backend has checks (`checks: []`).
      io.out(formatJson(backend.name, checks));
    } else if (checks.length === 0) {
      io.out(`${heading}\nThe ${backend.name} backend has no checks.\n`);
    } else {
      io.out(formatText(heading, checks));
    }
    return summarize(checks).exitCode;
  } finally {
    await backend.close();
    await sandbox?.close();
  }
}

/** The doctor CLI; the entry (bin/reseller-doctor.ts) hands it the registered backends. */
export function runDoctorCli(registry: BackendRegistry): void {
  void doctorCli(registry, process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`reseller-doctor: ${(error as Error).stack ?? String(error)}\n`);
      process.exitCode = DOCTOR_EXIT.failed;
    },
  );
}
