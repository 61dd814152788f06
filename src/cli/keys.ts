/**
 * Operator CLI for accounts and API keys. It works on the same store as the gateway (Redis when
 * REDIS_URL is set, else the sandbox key file), so keys take effect in running gateways at once,
 * through the same service layer as the admin API (src/admin/service.ts). It also mints admin
 * tokens (`admin-token create`), which needs no config or store.
 * `reseller-keys --help` (and `<command> --help`) lists the commands, options and exit codes
 * (src/cli/keys-help.ts); `--json` prints machine-readable output.
 */
import { parseArgs } from 'node:util';
import type { z } from 'zod';
import { AdminService, MAX_GRACE_SECONDS } from '../admin/service.js';
import { AccountIdSchema, AccountNameSchema, accountView, ExpiresAtSchema, issuedView, KeyNameSchema, keyView, RateLimitsSchema, UpstreamIdSchema } from '../admin/schemas.js';
import { ADMIN_SCOPES, mintAdminToken, type AdminScope } from '../admin/tokens.js';
import { upstreamIdCheck, type BackendRegistry } from '../backend/registry.js';
import { ConfigError } from '../config.js';
import { loadConfig } from '../load-config.js';
import { DEFAULT_SANDBOX_BACKEND } from '../sandbox.js';
import { isDisabled, KeyService } from '../keys/key-service.js';
import { resolvePepper } from '../keys/pepper.js';
import { sharedCustomers } from '../startup/shared-customers.js';
import { checkSharedSecrets } from '../startup/shared-secrets.js';
import { createKeyStore } from '../stores/factory.js';
import { StoreUnavailableError, type AccountRecord, type ApiKeyRecord, type KeyRateLimitOverrides } from '../stores/types.js';
import { SCOPES, type Scope } from '../keys/scopes.js';
import type { WebhookStore } from '../stores/webhook-types.js';
import { resealWebhookSecrets } from '../webhooks/reseal.js';
import { secretBoxFor, type SecretBox } from '../webhooks/secret-box.js';
import { processIo, type CliIo } from './io.js';
import { helpFor } from './keys-help.js';

class UsageError extends Error {}

/**
 * What a command prints: a line for people, a value for --json. The value is the admin API's answer
 * for the same record (its views in src/admin/schemas.ts): scripts read both alike.
 */
interface Output {
  text: string;
  json: unknown;
}

function parseScopes<S extends string>(raw: string | undefined, known: readonly S[]): S[] {
  if (!raw) throw new UsageError('--scopes is required');
  if (raw === 'all') return [...known];
  const scopes = raw.split(',').map((s) => s.trim());
  const unknown = scopes.filter((s) => !(known as readonly string[]).includes(s));
  if (unknown.length > 0) throw new UsageError(`unknown scope(s): ${unknown.join(', ')}`);
  return scopes as S[];
}

function wholeNumber(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw)) throw new UsageError(`--${name} must be a whole number`);
  return Number(raw);
}

/** A limit override in decimal digits, checked with the admin API's own schema (whole, safe, its minimum). */
function limit(name: string, raw: string | undefined, schema: z.ZodType<number | undefined>): number | undefined {
  const value = wholeNumber(name, raw);
  if (value === undefined) return undefined;
  const result = schema.safeParse(value);
  if (!result.success) throw new UsageError(`--${name} ${result.error.issues[0]?.message ?? 'is invalid'}`);
  return value;
}

/** An option's text checked with the admin API's own schema: the CLI takes what the API takes. */
function text(what: string, raw: string, schema: z.ZodType<string>): string {
  const result = schema.safeParse(raw);
  if (!result.success) throw new UsageError(`${what} ${result.error.issues[0]?.message ?? 'is invalid'}`);
  return result.data;
}

/**
 * The state the gateway acts on now, as the admin API's `status` says it: a key in a rotation's
 * grace period (a future revokedAt) is active until then, and an expiry passed is `expired`.
 */
function describeKey(key: ApiKeyRecord): string {
  const { status } = keyView(key);
  const ends = [key.revokedAt, key.expiresAt].filter((at): at is string => at !== null).sort((a, b) => Date.parse(a) - Date.parse(b));
  const state =
    status === 'revoked' ? `revoked ${key.revokedAt}` : status === 'expired' ? `expired ${key.expiresAt}` : ends[0] ? `active until ${ends[0]}` : 'active';
  return `${key.id}  account=${key.accountId}  name=${key.name}  ${state}  scopes=${key.scopes.join(',')}`;
}

/** `sharing`: the accounts on its customer, when more than one is (src/startup/shared-customers.ts); `problem`: why its upstream id is not served. */
function describeAccount(account: AccountRecord, sharing: readonly string[] = [], problem?: string): string {
  const state = isDisabled(account) ? `  disabled ${account.disabledAt}` : '';
  const others = sharing.filter((id) => id !== account.id);
  const shared = others.length > 0 ? `  SHARES ITS UPSTREAM CUSTOMER WITH ${others.join(', ')} (map all but one elsewhere)` : '';
  const unserved = problem === undefined ? '' : `  UPSTREAM ID NOT SERVED (it ${problem})`;
  return `${account.id}  upstream=${account.upstreamId}  name=${account.name}${state}${shared}${unserved}`;
}

/** An --upstream-id the schema takes and the backend can serve. */
function upstreamId(raw: string, keys: AdminService): string {
  const value = text('--upstream-id', raw, UpstreamIdSchema);
  const problem = keys.upstreamIdProblem(value);
  if (problem !== undefined) throw new UsageError(`--upstream-id ${problem}`);
  return value;
}

const COMMANDS = ['account', 'issue', 'list', 'rotate', 'revoke', 'admin-token', 'webhook-secrets'];

const OPTIONS = {
  account: { type: 'string' },
  name: { type: 'string' },
  'upstream-id': { type: 'string' },
  scopes: { type: 'string' },
  expires: { type: 'string' },
  'per-minute': { type: 'string' },
  burst: { type: 'string' },
  'per-day': { type: 'string' },
  grace: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parse(argv: string[]) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, strict: true, options: OPTIONS });
  } catch (error) {
    // node:util's own messages (unknown option, missing value) are fine; its stack is not.
    throw new UsageError((error as Error).message);
  }
}

/** `admin-token create`: a new admin token, printed once, and the config entry that admits it. */
function mintToken(sub: string | undefined, values: ReturnType<typeof parse>['values']): Output {
  if (sub !== 'create') throw new UsageError('admin-token create --name <name> --scopes <list|all>');
  if (!values.name) throw new UsageError('--name is required');
  const scopes = parseScopes<AdminScope>(values.scopes, ADMIN_SCOPES);
  let minted;
  try {
    minted = mintAdminToken(values.name, scopes);
  } catch {
    throw new UsageError('--name must be 1 to 64 characters of A-Z a-z 0-9 _ . - (starting with a letter or digit)');
  }
  const line = JSON.stringify(minted.entry);
  return {
    text: [
      `admin token for ${minted.entry.name} (shown once, store it in the panel now): ${minted.token}`,
      'config entry (an element of admin.tokens in the config file, or of the ADMIN_TOKENS JSON array):',
      line,
    ].join('\n'),
    json: { token: minted.token, entry: minted.entry },
  };
}

async function run(command: string | undefined, sub: string | undefined, arg: string | undefined, values: ReturnType<typeof parse>['values'], keys: AdminService): Promise<Output> {
  switch (command) {
    case 'account':
      if (sub === 'add' && arg) {
        if (!values.name || !values['upstream-id']) throw new UsageError('--name and --upstream-id are required');
        const account = await keys.createAccount({
          id: text('the account id', arg, AccountIdSchema),
          name: text('--name', values.name, AccountNameSchema),
          upstreamId: upstreamId(values['upstream-id'], keys),
        });
        return { text: `account ${account.id} → upstream customer ${account.upstreamId}`, json: accountView(account) };
      }
      if (sub === 'list') {
        const accounts = await keys.listAccounts();
        const shared = sharedCustomers(accounts);
        const lines = accounts.map((account) => describeAccount(account, shared.get(account.upstreamId), keys.upstreamIdProblem(account.upstreamId)));
        return { text: lines.join('\n'), json: accounts.map(accountView) };
      }
      if ((sub === 'disable' || sub === 'enable') && arg) {
        const account = await keys.setAccountDisabled(arg, sub === 'disable');
        return { text: describeAccount(account), json: accountView(account) };
      }
      if (sub === 'delete' && arg) {
        const account = await keys.deleteAccount(arg);
        return { text: `account ${account.id} deleted with its keys and webhook endpoint; upstream customer ${account.upstreamId} is free`, json: accountView(account) };
      }
      throw new UsageError('account add <id> | account list | account disable <id> | account enable <id> | account delete <id>');
    case 'issue': {
      if (!values.account || !values.name) throw new UsageError('--account and --name are required');
      const name = text('--name', values.name, KeyNameSchema);
      const expires = values.expires === undefined ? undefined : text('--expires', values.expires, ExpiresAtSchema);
      const overrides: KeyRateLimitOverrides = {};
      const { per_minute: perMinuteSchema, burst: burstSchema, per_day: perDaySchema } = RateLimitsSchema.shape;
      const perMinute = limit('per-minute', values['per-minute'], perMinuteSchema);
      const burst = limit('burst', values.burst, burstSchema);
      const perDay = limit('per-day', values['per-day'], perDaySchema);
      if (perMinute !== undefined) overrides.perMinute = perMinute;
      if (burst !== undefined) overrides.burst = burst;
      if (perDay !== undefined) overrides.perDay = perDay;
      const { record, key } = await keys.issueKey({
        accountId: values.account,
        name,
        // `none`, as the admin API's `[]`: a key for GET /v1/me only (an integration's health check).
        scopes: values.scopes === 'none' ? [] : parseScopes<Scope>(values.scopes, SCOPES),
        expiresAt: expires === undefined ? null : new Date(expires).toISOString(),
        rateLimits: Object.keys(overrides).length > 0 ? overrides : null,
      });
      return { text: `${describeKey(record)}\nkey (shown once, store it now): ${key}`, json: issuedView({ record, key }) };
    }
    case 'list': {
      const listed = await keys.listKeys(values.account);
      const now = Date.now();
      // The items of the admin API's page, unpaged: the CLI lists them all.
      return { text: listed.map(describeKey).join('\n') || '(no keys)', json: listed.map((key) => keyView(key, now)) };
    }
    case 'rotate': {
      if (!sub) throw new UsageError('rotate <key id>');
      // Checked before anything is written: a grace past the last representable date would fail
      // only after the successor was stored, and the admin API refuses more than this too.
      const graceSeconds = wholeNumber('grace', values.grace) ?? 0;
      if (graceSeconds > MAX_GRACE_SECONDS) throw new UsageError(`--grace must be at most ${MAX_GRACE_SECONDS} seconds (30 days)`);
      const { record, key, old } = await keys.rotateKey(sub, graceSeconds * 1000);
      return {
        text: `${describeKey(old)}\n${describeKey(record)}\nnew key (shown once, store it now): ${key}`,
        json: { old: keyView(old), new: issuedView({ record, key }) },
      };
    }
    case 'revoke': {
      if (!sub) throw new UsageError('revoke <key id>');
      const revoked = await keys.revokeKey(sub);
      return { text: describeKey(revoked), json: keyView(revoked) };
    }
    default:
      throw new UsageError(`unknown command ${command}`);
  }
}

/**
 * `webhook-secrets reseal`: every endpoint's secrets sealed with the current encryption key, once
 * the store's fingerprint accepts this configuration (as a gateway's boot does). Exit 1 when some
 * secret opens with none of the keys.
 */
async function reseal(sub: string | undefined, keys: KeyService, webhooks: WebhookStore, box: SecretBox): Promise<{ output: Output; code: number }> {
  if (sub !== 'reseal') throw new UsageError('webhook-secrets reseal');
  await checkSharedSecrets(keys, webhooks, box);
  const accounts = (await keys.listAccounts()).map((account) => account.id);
  const report = await resealWebhookSecrets(accounts, webhooks, box);
  const lines = [`webhook secrets sealed again with the current key: ${report.resealed}; sealed with it already: ${report.current}`];
  if (report.unopenable.length > 0) lines.push(`opened by none of the keys (set these endpoints again): ${report.unopenable.join(', ')}`);
  else lines.push('none is sealed with a previous key now');
  return { output: { text: lines.join('\n'), json: report }, code: report.unopenable.length > 0 ? 1 : 0 };
}

/**
 * The key CLI on `argv`: its exit code. The entry (bin/reseller-keys.ts, runKeysCli) runs it on the
 * process; tests run it in theirs.
 */
export async function keysCli(registry: BackendRegistry, argv: string[], io: CliIo = processIo): Promise<number> {
  const json = argv.includes('--json');
  const fail = (code: number, message: string, help?: string): number => {
    if (json) io.err(`${JSON.stringify({ error: message, exit_code: code })}\n`);
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
  const [command, sub, arg] = positionals;
  // Help needs no config and no store: it works before anything is set up.
  if (values.help) {
    io.out(`${helpFor(positionals)}\n`);
    return 0;
  }
  if (!command || !COMMANDS.includes(command)) {
    return fail(64, command ? `unknown command ${command}` : 'a command is required', helpFor([]));
  }
  if (command === 'admin-token') {
    // Needs neither config nor store: the token is random, the config line only its hash.
    try {
      const output = mintToken(sub, values);
      io.out(`${json ? JSON.stringify(output.json, null, 2) : output.text}\n`);
      return 0;
    } catch (error) {
      return fail(64, (error as Error).message, helpFor(positionals));
    }
  }
  let config;
  try {
    config = loadConfig(registry, io.env);
  } catch (error) {
    if (error instanceof ConfigError) return fail(78, error.message);
    throw error;
  }
  let store;
  try {
    store = await createKeyStore(config);
  } catch (error) {
    if (error instanceof StoreUnavailableError) return fail(69, error.message);
    // A Redis older than the stores need.
    if (error instanceof ConfigError) return fail(78, error.message);
    throw error;
  }
  try {
    const keys = new KeyService(store.keys, resolvePepper(config), { previousPeppers: config.keys.previousPeppers, issueChecksums: config.keys.issueChecksums });
    // A key hashed with another pepper than the gateways' would answer 401 everywhere.
    if (!(await keys.pepperMatchesStore())) {
      return fail(78, "invalid configuration:\n  - keys.pepper: not the pepper the keys in the shared Redis are hashed with; give the CLI the gateways' KEY_PEPPER");
    }
    if (command === 'webhook-secrets') {
      const { output, code } = await reseal(sub, keys, store.webhooks, secretBoxFor(config));
      io.out(`${json ? JSON.stringify(output.json, null, 2) : output.text}\n`);
      return code;
    }
    // The backend the gateways serve: the sandbox's on its key file; on a shared Redis, only the one
    // configured (a CLI given just REDIS_URL and KEY_PEPPER cannot tell, and checks none).
    const sandboxStore = !config.redisUrl && !config.redisClusterNodes?.length;
    const upstreamIdProblem = upstreamIdCheck(registry, config.upstream?.backend ?? (sandboxStore ? DEFAULT_SANDBOX_BACKEND : ''));
    const service = new AdminService({ keys, store: store.keys, clock: (id) => store.webhooks.clock(id), webhooks: store.webhooks, upstreamIdProblem });
    const output = await run(command, sub, arg, values, service);
    io.out(`${json ? JSON.stringify(output.json, null, 2) : output.text}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) return fail(64, error.message, helpFor(positionals));
    if (error instanceof ConfigError) return fail(78, error.message);
    if (error instanceof StoreUnavailableError) return fail(69, error.message);
    return fail(1, (error as Error).message);
  } finally {
    await store.close();
  }
}

/** The key CLI; the entry (bin/reseller-keys.ts) hands it the registered backends for the config. */
export function runKeysCli(registry: BackendRegistry): void {
  void keysCli(registry, process.argv.slice(2)).then((code) => process.exit(code));
}
