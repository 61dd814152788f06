/**
 * An account id the admin API's path refuses (empty, over 100 characters) is a usage error in the
 * key CLI too (exit 64, the id not printed back), not "unknown account …" after a store lookup.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { fileStoreCli } from '../cli/file-store-cli.js';

const cli = fileStoreCli(t, 'cli-account-id');

t.test('account ids are checked as the admin API checks its path', async () => {
  const long = 'a'.repeat(101);
  const runs = [
    ['account', 'disable', long],
    ['account', 'enable', long],
    ['account', 'delete', long],
    ['account', 'update', long, '--name', 'Long'],
    ['issue', '--account', long, '--name', 'ci', '--scopes', 'all'],
    ['list', '--account', long],
    ['list', '--account', ''],
  ];
  for (const args of runs) {
    const run = await cli(...args);
    assert.equal(run.code, 64, `${args.slice(0, 2).join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, /the account id must be 1 to 100 characters/, args.join(' ').slice(0, 40));
    assert.ok(!run.stderr.includes(long), 'the id is not printed back');
  }
  // 100 characters is an id the API's path takes: looked up, and unknown.
  const unknown = await cli('account', 'disable', 'a'.repeat(100));
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /unknown account a{100}/);
});

t.test('account list on an empty store says so', async () => {
  const listed = await cli('account', 'list');
  assert.equal(listed.code, 0);
  assert.equal(listed.stdout, '(no accounts)\n');
});

t.test('an account command without its id, or an unknown one, says which', async () => {
  const missing = await cli('account', 'disable');
  assert.equal(missing.code, 64);
  assert.match(missing.stderr, /^reseller-keys: account disable needs the account id\n/);
  assert.match(missing.stderr, /usage: reseller-keys account disable <id>/);
  const unknown = await cli('account', 'remove', 'acme', '--json');
  assert.equal(unknown.code, 64);
  assert.match(JSON.parse(unknown.stderr).error, /^unknown account command remove/);
});
