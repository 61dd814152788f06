/**
 * A key id, as the admin API's /admin/v1/keys/{id} takes it: 16 hex digits (else 400, the value not
 * echoed). The CLI looked any text up and printed it back (`unknown key rk_…_<secret>`): an operator
 * pasting the full key where its id belongs got the secret on stderr, a CI log's content. It is a
 * usage error (64) now, and the text is not printed.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { fileStoreCli } from './file-store-cli.js';

const cli = fileStoreCli(t, 'key-id');

t.test('revoke and rotate take a key id, and never print back a full key given instead', async () => {
  assert.equal((await cli('account', 'add', 'pasted', '--name', 'Pasted', '--upstream-id', '41')).code, 0);
  const issued = JSON.parse((await cli('issue', '--account', 'pasted', '--name', 'ci', '--scopes', 'none', '--json')).stdout) as { id: string; key: string };
  const secret = issued.key.slice(`rk_${issued.id}_`.length);
  for (const command of ['revoke', 'rotate']) {
    const run = await cli(command, issued.key);
    assert.equal(run.code, 64, `${command}: ${run.stderr}`);
    assert.match(run.stderr, /must be a key id \(16 hex digits\)/);
    assert.ok(!run.stderr.includes(secret), `${command} printed the key's secret`);
  }
  const [key] = JSON.parse((await cli('list', '--account', 'pasted', '--json')).stdout) as Array<{ status: string }>;
  assert.equal(key?.status, 'active', 'nothing was done');
  assert.equal((await cli('revoke', issued.id)).code, 0, 'a key id still works');
});
