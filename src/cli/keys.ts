/**
 * Operator CLI for accounts and API keys. It works on the same store as the gateway (Redis when
 * REDIS_URL is set, else the sandbox key file), so keys take effect in running gateways at once,
 * through the same service layer as the admin API (src/admin/service.ts). It also mints admin
 * tokens (`admin-token create`), which needs no store, and no config but for its audit record.
 * `reseller-keys --help` (and `<command> --help`) lists the commands, options and exit codes
 * (src/cli/keys-help.ts); `--json` prints machine-readable output. The commands themselves are in
 * account-commands.ts, key-commands.ts, admin-token.ts and webhook-secrets.ts; the options in args.ts.
 */
import { AdminService } from '../admin/service.js';
import { upstreamIdCheck, type BackendRegistry } from '../backend/registry.js';
import { ConfigError, type GatewayConfig } from '../config.js';
import { loadConfig } from '../load-config.js';
import { DEFAULT_SANDBOX_BACKEND } from '../sandbox.js';
import { KeyService } from '../keys/key-service.js';
import { resolvePepper } from '../keys/pepper.js';
import { Refusal } from '../keys/refusal.js';
import { createKeyStore } from '../stores/factory.js';
import { StoreUnavailableError } from '../stores/types.js';
import { secretBoxFor } from '../webhooks/secret-box.js';
import { accountCommand } from './account-commands.js';
import { adminTokenCommand } from './admin-token.js';
import { auditCommand, type CommandEnd } from './audit.js';
import { checkTaken, parse, UsageError, type CliValues, type Output } from './args.js';
import { processIo, type CliIo } from './io.js';
import { issueCommand, listCommand, revokeCommand, rotateCommand } from './key-commands.js';
import { helpFor } from './keys-help.js';
import { resealCommand } from './webhook-secrets.js';

const COMMANDS = ['account', 'issue', 'list', 'rotate', 'revoke', 'admin-token', 'webhook-secrets'];

function run(command: string | undefined, sub: string | undefined, arg: string | undefined, values: CliValues, keys: AdminService): Promise<Output> {
  switch (command) {
    case 'account':
      return accountCommand(sub, arg, values, keys);
    case 'issue':
      return issueCommand(values, keys);
    case 'list':
      return listCommand(values, keys);
    case 'rotate':
      return rotateCommand(sub, values, keys);
    case 'revoke':
      return revokeCommand(sub, keys);
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

/**
 * The key CLI on `argv`: its exit code. The entry (bin/reseller-keys.ts, runKeysCli) runs it on the
 * process; tests run it in theirs.
 */
export async function keysCli(registry: BackendRegistry, argv: string[], io: CliIo = processIo): Promise<number> {
  const json = argv.includes('--json');
  const fail = (code: number, message: string, help?: string, extensions: Record<string, string> = {}): number => {
    if (json) io.err(`${JSON.stringify({ error: message, exit_code: code, ...extensions })}\n`);
    else io.err(`reseller-keys: ${message}\n${help ? `\n${help}\n` : ''}`);
    return code;
  };
  let parsed;
  try {
    parsed = parse(argv);
  } catch (error) {
    return fail(64, (error as Error).message, helpFor(argv.filter((a) => !a.startsWith('-'))));
  }
  const { values, positionals } = parsed;
  const [command, sub] = positionals;
  // Help needs no config and no store: it works before anything is set up.
  if (values.help) {
    io.out(`${helpFor(positionals)}\n`);
    return 0;
  }
  if (!command || !COMMANDS.includes(command)) {
    return fail(64, command ? `unknown command ${command}` : 'a command is required', helpFor([]));
  }
  try {
    checkTaken(positionals, values);
  } catch (error) {
    return fail(64, (error as Error).message, helpFor(positionals));
  }
  let config: GatewayConfig | undefined;
  let configError: ConfigError | undefined;
  try {
    config = loadConfig(registry, io.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    // admin-token create needs neither config nor store (the token is random, the config line only
    // its hash): it mints without one, unrecorded, and says so below.
    if (command !== 'admin-token') return fail(78, error.message);
    configError = error;
  }
  const failure = (error: unknown): number => {
    if (error instanceof UsageError) return fail(64, error.message, helpFor(positionals));
    if (error instanceof ConfigError) return fail(78, error.message);
    if (error instanceof StoreUnavailableError) return fail(69, error.message);
    // As the admin API's problem does: the account holding the customer, for scripts to read.
    if (error instanceof Refusal) return fail(1, error.message, undefined, error.extensions);
    return fail(1, (error as Error).message);
  };
  let end: CommandEnd;
  try {
    const { output, code } =
      command === 'admin-token' || config === undefined ? { output: adminTokenCommand(sub, values), code: 0 } : await storeCommand(registry, config, positionals, values);
    io.out(`${json ? JSON.stringify(output.json, null, 2) : output.text}\n`);
    end = { code, subject: output.subject };
  } catch (error) {
    end = { code: failure(error), error };
    // A config the stores refuse (a pepper, an encryption key, a Redis too old): nothing was touched, as with one refused at load.
    if (error instanceof ConfigError) return end.code;
  }
  if (config) await auditCommand(config.admin.auditFile, positionals, values, end, io);
  else io.err(`reseller-keys: not recorded in the admin audit log, whose place the configuration names: ${configError?.message}\n`);
  return end.code;
}

/** A command on the key store (every one but `admin-token`): what it prints, and its exit code. */
async function storeCommand(registry: BackendRegistry, config: GatewayConfig, positionals: string[], values: CliValues): Promise<{ output: Output; code: number }> {
  const [command, sub, arg] = positionals;
  // A Redis older than the stores need is a ConfigError.
  const store = await createKeyStore(config);
  try {
    const keys = new KeyService(store.keys, resolvePepper(config), { previousPeppers: config.keys.previousPeppers, issueChecksums: config.keys.issueChecksums });
    // A key hashed with another pepper than the gateways' would answer 401 everywhere.
    if (!(await keys.pepperMatchesStore())) {
      throw new ConfigError("invalid configuration:\n  - keys.pepper: not the pepper the keys in the shared Redis are hashed with; give the CLI the gateways' KEY_PEPPER");
    }
    if (command === 'webhook-secrets') return await resealCommand(sub, keys, store.webhooks, secretBoxFor(config));
    // The backend the gateways serve: the sandbox's on its key file; on a shared Redis, only the one
    // configured (a CLI given just REDIS_URL and KEY_PEPPER cannot tell, and checks none).
    const sandboxStore = !config.redisUrl && !config.redisClusterNodes?.length;
    const upstreamIdProblem = upstreamIdCheck(registry, config.upstream?.backend ?? (sandboxStore ? DEFAULT_SANDBOX_BACKEND : ''));
    const service = new AdminService({ keys, store: store.keys, clock: (id) => store.webhooks.clock(id), webhooks: store.webhooks, outbox: store.webhookOutbox, upstreamIdProblem });
    return { output: await run(command, sub, arg, values, service), code: 0 };
  } finally {
    await store.close();
  }
}

/** The key CLI; the entry (bin/reseller-keys.ts) hands it the registered backends for the config. */
export function runKeysCli(registry: BackendRegistry): void {
  void keysCli(registry, process.argv.slice(2)).then((code) => process.exit(code));
}
