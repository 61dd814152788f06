/**
 * Accounts mapped to one upstream customer between them, which a release before the gateway
 * refused it may have left (or an older instance during a rolling upgrade). They go on working,
 * each one's keys reading the other's customer, and its webhook endpoint hearing of its changes: the
 * operator is told at boot and by `reseller-keys account list`, and remaps all but one. Read once,
 * never on a request: the key store's writes keep the claims (KeyStore.replaceAccount). Beside them,
 * the accounts whose upstream id the backend cannot serve, which such a release also accepted.
 */
import type { AccountRecord } from '../stores/types.js';

/** The ids of the accounts that share each upstream customer shared at all, oldest first. */
export function sharedCustomers(accounts: readonly AccountRecord[]): Map<string, string[]> {
  const byCustomer = new Map<string, string[]>();
  for (const account of accounts) byCustomer.set(account.upstreamId, [...(byCustomer.get(account.upstreamId) ?? []), account.id]);
  return new Map([...byCustomer].filter(([, ids]) => ids.length > 1));
}

/**
 * The boot warning for accounts whose upstream id the backend refuses (`01`, ` 1`: accepted before
 * the edges checked it), whose every request fails. Named by account, as above.
 */
export function unservedAccountsWarning(accounts: readonly AccountRecord[], upstreamIdProblem: (upstreamId: string) => string | undefined): string | undefined {
  const unserved = accounts.filter((account) => upstreamIdProblem(account.upstreamId) !== undefined).map((account) => account.id);
  if (unserved.length === 0) return undefined;
  return (
    `accounts mapped to an upstream id this backend cannot serve (every request of theirs fails): ${unserved.join(', ')}. ` +
    'Map each to its customer as the backend writes its id (PATCH /admin/v1/accounts/{id} with upstream_id); `reseller-keys account list` shows them'
  );
}

/**
 * The boot warning, when any customer is shared. It names the accounts, not the customers: the log
 * carries no upstream id (`account list` shows them).
 */
export function sharedCustomersWarning(accounts: readonly AccountRecord[]): string | undefined {
  const groups = [...sharedCustomers(accounts).values()];
  if (groups.length === 0) return undefined;
  const named = groups.map((ids) => ids.join(' + ')).join('; ');
  return (
    `accounts mapped to the same upstream customer: ${named}. Each one's keys read that customer's services, credentials and invoices, ` +
    "and each one's webhook endpoint hears of its changes. Map all but one to their own customer (PATCH /admin/v1/accounts/{id} with upstream_id); " +
    '`reseller-keys account list` shows them'
  );
}
