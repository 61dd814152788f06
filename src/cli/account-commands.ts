/** `account add|update|list|disable|enable|delete`: the admin API's account endpoints, on the command line. */
import type { AdminService } from '../admin/service.js';
import { AccountIdSchema, AccountNameSchema, AccountPathSchema, accountView, UpstreamIdSchema } from '../admin/schemas.js';
import { isDisabled } from '../keys/key-service.js';
import { sharedCustomers } from '../startup/shared-customers.js';
import type { AccountRecord } from '../stores/types.js';
import { text, UsageError, type CliValues, type Output } from './args.js';

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

/**
 * An existing account's id, as the admin API's path takes it (one created before ids were checked
 * may be longer than a new one). Anything else is refused without a lookup, and not printed back.
 */
export function accountIdArg(raw: string): string {
  return text('the account id', raw, AccountPathSchema.shape.id);
}

export async function accountCommand(sub: string | undefined, id: string | undefined, values: CliValues, keys: AdminService): Promise<Output> {
  if (sub === 'add' && id) {
    if (!values.name || !values['upstream-id']) throw new UsageError('--name and --upstream-id are required');
    const account = await keys.createAccount({
      id: text('the account id', id, AccountIdSchema),
      name: text('--name', values.name, AccountNameSchema),
      upstreamId: upstreamId(values['upstream-id'], keys),
    });
    return { text: `account ${account.id} → upstream customer ${account.upstreamId}`, json: accountView(account) };
  }
  if (sub === 'update' && id) {
    // As PATCH /admin/v1/accounts/{id}: either field, or both; one left out stays.
    if (values.name === undefined && values['upstream-id'] === undefined) throw new UsageError('--name or --upstream-id is required');
    const account = await keys.updateAccount(accountIdArg(id), {
      ...(values.name === undefined ? {} : { name: text('--name', values.name, AccountNameSchema) }),
      ...(values['upstream-id'] === undefined ? {} : { upstreamId: upstreamId(values['upstream-id'], keys) }),
    });
    return { text: describeAccount(account), json: accountView(account) };
  }
  if (sub === 'list') {
    const accounts = await keys.listAccounts();
    const shared = sharedCustomers(accounts);
    const lines = accounts.map((account) => describeAccount(account, shared.get(account.upstreamId), keys.upstreamIdProblem(account.upstreamId)));
    return { text: lines.join('\n') || '(no accounts)', json: accounts.map(accountView) };
  }
  if ((sub === 'disable' || sub === 'enable') && id) {
    const account = await keys.setAccountDisabled(accountIdArg(id), sub === 'disable');
    return { text: describeAccount(account), json: accountView(account) };
  }
  if (sub === 'delete' && id) {
    const account = await keys.deleteAccount(accountIdArg(id));
    return { text: `account ${account.id} deleted with its keys and webhook endpoint; upstream customer ${account.upstreamId} is free`, json: accountView(account) };
  }
  if (sub === undefined) throw new UsageError('account needs a command: add, update, list, disable, enable or delete');
  if (['add', 'update', 'disable', 'enable', 'delete'].includes(sub)) throw new UsageError(`account ${sub} needs the account id`);
  throw new UsageError(`unknown account command ${sub}: add, update, list, disable, enable or delete`);
}
