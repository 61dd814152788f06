/**
 * Operator CLI for accounts and API keys. It works on the same store as the gateway (Redis when
 * REDIS_URL is set, else the sandbox key file), so keys take effect in running gateways at once.
 *
 *   reseller-keys account add <id> --name <name> --upstream-id <WHMCS clientid>
 *   reseller-keys account list
 *   reseller-keys issue --account <id> --name <name> --scopes <s1,s2|all> [--expires <RFC 3339>]
 *                       [--per-minute N] [--burst N] [--per-day N]
 *   reseller-keys list [--account <id>]
 *   reseller-keys rotate <key id> [--grace <seconds>]
 *   reseller-keys revoke <key id>
 */
import { parseArgs } from 'node:util';
import type { BackendRegistry } from '../backend/registry.js';
import { ConfigError, loadConfig } from '../config.js';
import { KeyService } from '../keys/key-service.js';
import { resolvePepper } from '../keys/pepper.js';
import { createKeyStore } from '../stores/factory.js';
import { SCOPES, type ApiKeyRecord, type KeyRateLimitOverrides, type Scope } from '../stores/types.js';

const USAGE = `usage:
  reseller-keys account add <id> --name <name> --upstream-id <clientid>
  reseller-keys account list
  reseller-keys issue --account <id> --name <name> --scopes <s1,s2|all> [--expires <RFC 3339>] [--per-minute N] [--burst N] [--per-day N]
  reseller-keys list [--account <id>]
  reseller-keys rotate <key id> [--grace <seconds>]
  reseller-keys revoke <key id>
scopes: ${SCOPES.join(', ')}`;

class UsageError extends Error {}

function parseScopes(raw: string | undefined): Scope[] {
  if (!raw) throw new UsageError('--scopes is required');
  if (raw === 'all') return [...SCOPES];
  const scopes = raw.split(',').map((s) => s.trim());
  const unknown = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length > 0) throw new UsageError(`unknown scope(s): ${unknown.join(', ')}`);
  return scopes as Scope[];
}

function wholeNumber(name: string, raw: string | undefined, minimum: 0 | 1): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < minimum) {
    throw new UsageError(`--${name} must be a whole number${minimum === 1 ? ' above 0' : ''}`);
  }
  return Number(raw);
}

function describeKey(key: ApiKeyRecord): string {
  const state = key.revokedAt ? `revoked ${key.revokedAt}` : key.expiresAt ? `expires ${key.expiresAt}` : 'active';
  return `${key.id}  account=${key.accountId}  name=${key.name}  ${state}  scopes=${key.scopes.join(',')}`;
}

async function run(argv: string[], keys: KeyService): Promise<string> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      account: { type: 'string' },
      name: { type: 'string' },
      'upstream-id': { type: 'string' },
      scopes: { type: 'string' },
      expires: { type: 'string' },
      'per-minute': { type: 'string' },
      burst: { type: 'string' },
      'per-day': { type: 'string' },
      grace: { type: 'string' },
    },
  });
  const [command, sub, arg] = positionals;
  switch (command) {
    case 'account':
      if (sub === 'add' && arg) {
        if (!values.name || !values['upstream-id']) throw new UsageError('--name and --upstream-id are required');
        const account = await keys.createAccount({ id: arg, name: values.name, upstreamId: values['upstream-id'] });
        return `account ${account.id} → upstream customer ${account.upstreamId}`;
      }
      if (sub === 'list') {
        return (await keys.listAccounts()).map((a) => `${a.id}  upstream=${a.upstreamId}  name=${a.name}`).join('\n');
      }
      throw new UsageError('account add <id> | account list');
    case 'issue': {
      if (!values.account || !values.name) throw new UsageError('--account and --name are required');
      if (values.expires !== undefined && Number.isNaN(Date.parse(values.expires))) throw new UsageError('--expires must be an RFC 3339 time');
      const overrides: KeyRateLimitOverrides = {};
      const perMinute = wholeNumber('per-minute', values['per-minute'], 1);
      const burst = wholeNumber('burst', values.burst, 0);
      const perDay = wholeNumber('per-day', values['per-day'], 1);
      if (perMinute !== undefined) overrides.perMinute = perMinute;
      if (burst !== undefined) overrides.burst = burst;
      if (perDay !== undefined) overrides.perDay = perDay;
      const { record, key } = await keys.issue({
        accountId: values.account,
        name: values.name,
        scopes: parseScopes(values.scopes),
        expiresAt: values.expires ? new Date(values.expires).toISOString() : null,
        rateLimits: Object.keys(overrides).length > 0 ? overrides : null,
      });
      return `${describeKey(record)}\nkey (shown once, store it now): ${key}`;
    }
    case 'list':
      return (await keys.list(values.account)).map(describeKey).join('\n') || '(no keys)';
    case 'rotate': {
      if (!sub) throw new UsageError('rotate <key id>');
      const graceSeconds = values.grace === undefined ? 0 : Number(values.grace);
      if (!Number.isInteger(graceSeconds) || graceSeconds < 0) throw new UsageError('--grace must be whole seconds');
      const { record, key, old } = await keys.rotate(sub, graceSeconds * 1000);
      return `${describeKey(old)}\n${describeKey(record)}\nnew key (shown once, store it now): ${key}`;
    }
    case 'revoke':
      if (!sub) throw new UsageError('revoke <key id>');
      return describeKey(await keys.revoke(sub));
    default:
      throw new UsageError(command ? `unknown command ${command}` : 'a command is required');
  }
}

async function main(registry: BackendRegistry): Promise<number> {
  let config;
  try {
    config = loadConfig(registry);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`reseller-keys: ${error.message}\n`);
      return 78;
    }
    throw error;
  }
  const store = await createKeyStore(config);
  try {
    const output = await run(process.argv.slice(2), new KeyService(store.keys, resolvePepper(config)));
    process.stdout.write(`${output}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`reseller-keys: ${error.message}\n${USAGE}\n`);
      return 64;
    }
    process.stderr.write(`reseller-keys: ${(error as Error).message}\n`);
    return 1;
  } finally {
    await store.close();
  }
}

/** The key CLI; the entry (bin/reseller-keys.ts) hands it the registered backends for the config. */
export function runKeysCli(registry: BackendRegistry): void {
  void main(registry).then((code) => process.exit(code));
}
