/** The key CLI's help texts, one per command (`reseller-keys <command> --help`). */
import { ADMIN_SCOPES } from '../admin/tokens.js';
import { SCOPES } from '../keys/scopes.js';

export const EXIT_CODES = `exit codes:
  0   done
  1   refused: unknown account or key, a revoked or expired key to rotate, a duplicate account,
      an upstream customer another account holds, a disabled account to issue or rotate a key
      for; a webhook secret no key opens (reseal)
  64  usage: unknown command or option, an option or argument the command does not take, a
      missing or malformed argument (the help follows)
  69  the key store (Redis) is unreachable
  78  the configuration is invalid (every wrong field is named), or Redis is older than 6.2`;

const COMMON = `options for every command:
  --json      machine-readable output on stdout, in the admin API's shapes (errors as
              {"error": …, "exit_code": …} on stderr; "held_by" names the account holding
              an upstream customer)
  -h, --help  this help`;

export const HELP: Record<string, string> = {
  '': `usage: reseller-keys <command> [options]

Accounts and API keys, on the gateway's own store (Redis when REDIS_URL is set, else the key file):
a key issued or revoked takes effect in running gateways without a restart.

commands:
  account add <id> --name <name> --upstream-id <upstream id>  map an account to the backend's customer
  account update <id> [--name <name>] [--upstream-id <id>]    rename an account, or map it to another customer
  account list                                                list accounts
  account disable <id> | account enable <id>                  refuse every key of an account, or let them work again
  account delete <id>                                         delete an account with its keys and webhook endpoint
  issue --account <id> --name <name> --scopes <list|all>      issue a key (shown once; none: /v1/me only)
  list [--account <id>]                                       list keys (never the key itself)
  rotate <key id> [--grace <seconds>]                         new key; the old one works for the grace period
  revoke <key id>                                             revoke a key at once
  admin-token create --name <name> --scopes <list|all>        mint an admin API token (shown once) and its config line
  webhook-secrets reseal                                      after an encryption key rotation: seal every webhook secret with the current key

Run \`reseller-keys <command> --help\` for a command's options.

${COMMON}

${EXIT_CODES}`,
  account: `usage: reseller-keys account add <id> --name <name> --upstream-id <upstream id>
       reseller-keys account update <id> [--name <name>] [--upstream-id <upstream id>]
       reseller-keys account list
       reseller-keys account disable <id>
       reseller-keys account enable <id>
       reseller-keys account delete <id>

${COMMON}

${EXIT_CODES}`,
  'account add': `usage: reseller-keys account add <id> --name <name> --upstream-id <upstream id>

Creates account <id> for the backend's customer <upstream id>, in the backend's own id:
  whmcs        the client id (clientid), in digits: 12 (not 012, +12 or 12.0)
  fossbilling  the client id, in digits as on WHMCS
  v1           the upstream account, whose key upstream.v1.apiKeys holds (V1_UPSTREAM_API_KEYS)
<id>: 1 to 64 characters of A-Z a-z 0-9 _ . - starting with a letter or digit, as the admin API takes.
<name>: 1 to 200 characters, no control characters. A customer another account holds is refused
(exit 1, naming that account): one upstream customer, one account.

${COMMON}

${EXIT_CODES}`,
  'account update': `usage: reseller-keys account update <id> [--name <name>] [--upstream-id <upstream id>]

Renames the account, or maps it to another of the backend's customers (in its id, as for
account add), as the admin API's PATCH /admin/v1/accounts/{id} does; at least one of the two, and
one left out stays. The account's keys serve the new customer from the next request, in every
running gateway, and the customer it leaves is free for another account at once. A customer another
account holds is refused (exit 1, naming that account) and nothing changes.

${COMMON}

${EXIT_CODES}`,
  'account list': `usage: reseller-keys account list

${COMMON}

${EXIT_CODES}`,
  'account disable': `usage: reseller-keys account disable <id>

Every key of the account is refused (401) at once, in every running gateway; no key can be issued
or rotated for it. Its keys are kept: \`account enable\` lets them work again.

${COMMON}

${EXIT_CODES}`,
  'account delete': `usage: reseller-keys account delete <id>

Offboards a reseller: the account, every key of it, its webhook endpoint, delivery log and event
counter are deleted, and its upstream customer is free for another account. Its keys are refused
(401) at once, in every running gateway. Its id is not used again (an account add under it is
refused). To keep the keys, disable it.

${COMMON}

${EXIT_CODES}`,
  'account enable': `usage: reseller-keys account enable <id>

The account's keys that are neither revoked nor expired work again, at once.

${COMMON}

${EXIT_CODES}`,
  'admin-token': `usage: reseller-keys admin-token create --name <name> --scopes <s1,s2|all>

Mints a token for the admin API (on the ops listener, /admin/v1) and prints it once, with the config
entry that admits it: only the token's SHA-256 goes into the config (admin.tokens, or the
ADMIN_TOKENS JSON array). Needs no store; the admin audit log records the token's name (never the
token), and without a valid config it still mints, and says that nothing was recorded.
  --name      who the admin audit log names for the token's calls (a panel, a person)
  --scopes    a comma-separated list, or all: ${ADMIN_SCOPES.join(', ')}

${COMMON}

${EXIT_CODES}`,
  issue: `usage: reseller-keys issue --account <id> --name <name> --scopes <s1,s2|all|none>
                     [--expires <RFC 3339>] [--per-minute N] [--burst N] [--per-day N]

Issues a key and prints it once (store it now: only its hash is kept).
  --scopes      a comma-separated list, or all: ${SCOPES.join(', ')};
                or none: a key for GET /v1/me only
  --expires     when the key stops working, RFC 3339 with its offset, e.g. 2027-01-01T00:00:00Z
                (default: never); a bare date is refused: its moment depends on the time zone
  --per-minute, --burst, --per-day   this key's own rate limits instead of the configured defaults

${COMMON}

${EXIT_CODES}`,
  list: `usage: reseller-keys list [--account <id>]

Lists keys (id, account, name, state, scopes); a key itself is never shown again. The state is the
one the gateway acts on now: active (until when, for a key in a rotation's grace period or with an
expiry), revoked or expired.

${COMMON}

${EXIT_CODES}`,
  rotate: `usage: reseller-keys rotate <key id> [--grace <seconds>]

Issues a successor with the same account, name, scopes, expiry and limits, printed once; the old
key keeps working for --grace seconds (default 0: it stops now; at most 2592000, 30 days), or until
an earlier end it has already. A revoked or expired key cannot be rotated.
<key id>: the 16 hex digits \`list\` shows (not the key itself).

${COMMON}

${EXIT_CODES}`,
  revoke: `usage: reseller-keys revoke <key id>

Revokes the key at once, in every running gateway.
<key id>: the 16 hex digits \`list\` shows (not the key itself).

${COMMON}

${EXIT_CODES}`,
  'webhook-secrets': `usage: reseller-keys webhook-secrets reseal

After WEBHOOK_ENCRYPTION_KEY was rotated (the old key in WEBHOOK_PREVIOUS_ENCRYPTION_KEYS), seals
every webhook endpoint's secret (and its previous one, during a secret rotation's overlap) with the
current key. The secrets themselves do not change. Prints how many were sealed again and how many
were sealed with the current key already: once a run finds none to seal again (and no gateway with
only the old key runs), the previous key can be removed. Run it with the gateways' configuration
(Redis, WEBHOOK_ENCRYPTION_KEY, WEBHOOK_PREVIOUS_ENCRYPTION_KEYS); exit 1 names the accounts whose
secret none of the keys opens (their endpoint must be set again).

${COMMON}

${EXIT_CODES}`,
};

/** The most specific help for what was typed: `account add`, then `account`, then the overview. */
export function helpFor(positionals: string[]): string {
  const [command = '', sub = ''] = positionals;
  return HELP[`${command} ${sub}`] ?? HELP[command] ?? (HELP[''] as string);
}
