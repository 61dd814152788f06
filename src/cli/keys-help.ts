/** The key CLI's help texts, one per command (`reseller-keys <command> --help`). */
import { SCOPES } from '../keys/scopes.js';

export const EXIT_CODES = `exit codes:
  0   done
  1   refused: unknown account or key, a revoked or expired key to rotate, a duplicate account
  64  usage: unknown command or option, a missing or malformed argument (the help follows)
  69  the key store (Redis) is unreachable
  78  the configuration is invalid (every wrong field is named)`;

const COMMON = `options for every command:
  --json      machine-readable output on stdout (errors as {"error": …, "exit_code": …} on stderr)
  -h, --help  this help`;

export const HELP: Record<string, string> = {
  '': `usage: reseller-keys <command> [options]

Accounts and API keys, on the gateway's own store (Redis when REDIS_URL is set, else the key file):
a key issued or revoked takes effect in running gateways without a restart.

commands:
  account add <id> --name <name> --upstream-id <clientid>   map an account to a WHMCS client
  account list                                               list accounts
  issue --account <id> --name <name> --scopes <list|all>     issue a key (shown once)
  list [--account <id>]                                      list keys (never the key itself)
  rotate <key id> [--grace <seconds>]                        new key; the old one works for the grace period
  revoke <key id>                                            revoke a key at once

Run \`reseller-keys <command> --help\` for a command's options.

${COMMON}

${EXIT_CODES}`,
  account: `usage: reseller-keys account add <id> --name <name> --upstream-id <clientid>
       reseller-keys account list

${COMMON}

${EXIT_CODES}`,
  'account add': `usage: reseller-keys account add <id> --name <name> --upstream-id <clientid>

Creates account <id> for the upstream customer <clientid> (the WHMCS client id).

${COMMON}

${EXIT_CODES}`,
  'account list': `usage: reseller-keys account list

${COMMON}

${EXIT_CODES}`,
  issue: `usage: reseller-keys issue --account <id> --name <name> --scopes <s1,s2|all>
                     [--expires <RFC 3339>] [--per-minute N] [--burst N] [--per-day N]

Issues a key and prints it once (store it now: only its hash is kept).
  --scopes      a comma-separated list, or all: ${SCOPES.join(', ')}
  --expires     when the key stops working, e.g. 2027-01-01T00:00:00Z (default: never)
  --per-minute, --burst, --per-day   this key's own rate limits instead of the configured defaults

${COMMON}

${EXIT_CODES}`,
  list: `usage: reseller-keys list [--account <id>]

Lists keys (id, account, name, state, scopes); a key itself is never shown again.

${COMMON}

${EXIT_CODES}`,
  rotate: `usage: reseller-keys rotate <key id> [--grace <seconds>]

Issues a successor with the same account, scopes and limits, printed once; the old key keeps working
for --grace seconds (default 0: it stops now). A revoked or expired key cannot be rotated.

${COMMON}

${EXIT_CODES}`,
  revoke: `usage: reseller-keys revoke <key id>

Revokes the key at once, in every running gateway.

${COMMON}

${EXIT_CODES}`,
};

/** The most specific help for what was typed: `account add`, then `account`, then the overview. */
export function helpFor(positionals: string[]): string {
  const [command = '', sub = ''] = positionals;
  return HELP[`${command} ${sub}`] ?? HELP[command] ?? (HELP[''] as string);
}
