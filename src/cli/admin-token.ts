/** `admin-token create`: a new admin token, printed once, and the config entry that admits it. */
import { ADMIN_SCOPES, mintAdminToken, type AdminScope } from '../admin/tokens.js';
import { parseScopes, UsageError, type CliValues, type Output } from './args.js';

export function adminTokenCommand(sub: string | undefined, values: CliValues): Output {
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
