/**
 * The admin API refuses a field its endpoint does not take (strict bodies: 400, nothing done). The
 * key CLI took every option on every command and dropped the ones a command does not use:
 * `revoke <key> --grace 3600`, meant as a revocation in an hour, revoked the key at once. An option
 * or an argument a command does not take is a usage error (64), and nothing is written.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { fileStoreCli } from './file-store-cli.js';

const cli = fileStoreCli(t, 'stray-options');

t.test('an option or argument the command does not take is refused, and nothing is done', async () => {
  assert.equal((await cli('account', 'add', 'stray', '--name', 'Stray', '--upstream-id', '31')).code, 0);
  const issued = JSON.parse((await cli('issue', '--account', 'stray', '--name', 'ci', '--scopes', 'all', '--json')).stdout) as { id: string };

  const graceful = await cli('revoke', issued.id, '--grace', '3600');
  assert.equal(graceful.code, 64, `revoke takes no --grace: ${graceful.stdout}`);
  assert.match(graceful.stderr, /revoke does not take --grace/);
  const [key] = JSON.parse((await cli('list', '--account', 'stray', '--json')).stdout) as Array<{ status: string; revoked_at: string | null }>;
  assert.equal(key?.revoked_at, null, 'the key was not revoked');

  const twoKeys = await cli('revoke', issued.id, 'another');
  assert.equal(twoKeys.code, 64, 'one key per revoke: a second id is not silently dropped');

  const expiring = await cli('account', 'add', 'other', '--name', 'Other', '--upstream-id', '32', '--expires', '2099-01-01T00:00:00Z');
  assert.equal(expiring.code, 64);
  assert.deepEqual(JSON.parse((await cli('account', 'list', '--json')).stdout).map((a: { id: string }) => a.id), ['stray'], 'no account added');

  const listed = await cli('list', '--scopes', 'read:billing');
  assert.equal(listed.code, 64, 'list filters by --account only');
});
