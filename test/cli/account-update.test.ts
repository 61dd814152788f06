/**
 * `account update`: the key CLI's twin of PATCH /admin/v1/accounts/{id}. It renames an account or
 * maps it to another customer under the admin API's rules: a customer another account holds is
 * refused (exit 1, the holder named, nothing written), an upstream id the backend cannot serve is
 * a usage error (64), and an unknown account is refused (1).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { fileStoreCli } from './file-store-cli.js';

const cli = fileStoreCli(t, 'account-update');

async function accounts(): Promise<Array<{ id: string; name: string; upstream_id: string }>> {
  return JSON.parse((await cli('account', 'list', '--json')).stdout);
}

t.test('account update follows PATCH /admin/v1/accounts/{id}', async () => {
  assert.equal((await cli('account', 'add', 'first', '--name', 'First', '--upstream-id', '21')).code, 0);
  assert.equal((await cli('account', 'add', 'second', '--name', 'Second', '--upstream-id', '22')).code, 0);
  const before = await accounts();

  const taken = await cli('account', 'update', 'second', '--upstream-id', '21');
  assert.equal(taken.code, 1, `a customer another account holds is refused: ${taken.stderr}`);
  assert.match(taken.stderr, /upstream customer 21 is mapped to account first already/);

  const malformed = await cli('account', 'update', 'second', '--upstream-id', '022');
  assert.equal(malformed.code, 64, 'an upstream id the backend cannot serve is a usage error');
  assert.match(malformed.stderr, /--upstream-id must be/);

  const controlled = await cli('account', 'update', 'second', '--name', 'Se\u001b[2Jcond');
  assert.equal(controlled.code, 64, 'a name with control characters is refused, as PATCH does');

  const nothing = await cli('account', 'update', 'second');
  assert.equal(nothing.code, 64, '--name or --upstream-id is required');

  const unknown = await cli('account', 'update', 'nobody', '--name', 'Nobody');
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /unknown account nobody/);

  assert.deepEqual(await accounts(), before, 'nothing refused was written');

  const moved = await cli('account', 'update', 'second', '--name', 'Second Hosting', '--upstream-id', '23', '--json');
  assert.equal(moved.code, 0, moved.stderr);
  const view = JSON.parse(moved.stdout);
  assert.equal(view.name, 'Second Hosting');
  assert.equal(view.upstream_id, '23');
  // The customer it left is free at once.
  assert.equal((await cli('account', 'add', 'third', '--name', 'Third', '--upstream-id', '22')).code, 0);

  const renamed = await cli('account', 'update', 'first', '--name', 'First Hosting');
  assert.equal(renamed.code, 0, renamed.stderr);
  assert.match(renamed.stdout, /^first {2}upstream=21 {2}name=First Hosting/);
});

t.test('account update --help documents it', async () => {
  const help = await cli('account', 'update', '--help');
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^usage: reseller-keys account update <id> \[--name <name>\] \[--upstream-id <upstream id>\]/);
});
