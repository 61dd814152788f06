/**
 * One upstream customer, one account, at the operator's hand: the key CLI refuses a second account
 * on a customer (exit 1, naming the holder) and flags accounts that already share one; a gateway
 * booting on such a store serves both and warns, naming the accounts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { BACKENDS } from '../../mappings/index.js';
import { keysCli } from '../../src/cli/keys.js';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { bearer, buildTestGateway } from '../helpers/gateway.js';

const dir = mkdtempSync(join(tmpdir(), 'rg-shared-upstream-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

async function cli(keysFile: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const env: NodeJS.ProcessEnv = { ...process.env, KEYS_FILE: keysFile, AUDIT_LOG_FILE: join(dir, 'audit.log'), ADMIN_AUDIT_LOG_FILE: join(dir, 'admin-audit.log'), CONFIG_FILE: join(process.cwd(), 'config', 'gateway.json') };
  delete env.REDIS_URL;
  const code = await keysCli(BACKENDS, args, { out: (text) => (stdout += text), err: (text) => (stderr += text), env });
  return { code, stdout, stderr };
}

t.test('account add refuses a customer another account holds: exit 1, the holder named, nothing written', async () => {
  const keysFile = join(dir, 'add.json');
  assert.equal((await cli(keysFile, 'account', 'add', 'first', '--name', 'First', '--upstream-id', '21')).code, 0);
  const typo = await cli(keysFile, 'account', 'add', 'second', '--name', 'Second', '--upstream-id', '21');
  assert.equal(typo.code, 1, typo.stdout);
  assert.match(typo.stderr, /upstream customer 21 is mapped to account first already/);
  const json = await cli(keysFile, 'account', 'add', 'second', '--name', 'Second', '--upstream-id', '21', '--json');
  assert.equal(JSON.parse(json.stderr).exit_code, 1);
  const listed = await cli(keysFile, 'account', 'list', '--json');
  assert.deepEqual(JSON.parse(listed.stdout).map((account: { id: string }) => account.id), ['first']);
});

/** A key file written before the gateway refused it: two accounts on customer 1. */
function sharedFile(): string {
  const path = join(dir, 'shared.json');
  const account = (id: string, createdAt: string) => ({ id, name: id, upstreamId: '1', createdAt });
  const accounts = { older: account('older', '2026-01-01T00:00:00.000Z'), newer: account('newer', '2026-02-01T00:00:00.000Z'), alone: { ...account('alone', '2026-03-01T00:00:00.000Z'), upstreamId: '2' } };
  writeFileSync(path, JSON.stringify({ accounts, keys: {} }));
  return path;
}

t.test('account list flags the accounts that share a customer', async () => {
  const listed = await cli(sharedFile(), 'account', 'list');
  assert.equal(listed.code, 0, listed.stderr);
  const lines = listed.stdout.trim().split('\n');
  assert.match(lines[0] ?? '', /^older .*SHARES ITS UPSTREAM CUSTOMER WITH newer/);
  assert.match(lines[1] ?? '', /^newer .*SHARES ITS UPSTREAM CUSTOMER WITH older/);
  assert.doesNotMatch(lines[2] ?? '', /SHARES/);
});

t.test('a gateway on such a store serves both accounts and warns at boot, naming them', async () => {
  const stores = createMemoryStores({ keysFile: sharedFile() });
  const gw = await buildTestGateway({ stores, issueKeys: false });
  try {
    const warning = gw.logs.map((line) => JSON.parse(line)).find((line) => /same upstream customer/.test(line.msg));
    assert.ok(warning, 'warned at boot');
    assert.equal(warning.level, 40);
    assert.match(warning.msg, /older \+ newer/);
    assert.doesNotMatch(warning.msg, /\b1\b/, 'no upstream id in the log');
    for (const accountId of ['older', 'newer']) {
      const { key } = await gw.keyService.issue({ accountId, name: 'ci', scopes: [] });
      const me = await gw.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) });
      assert.equal(me.statusCode, 200, me.body);
    }
  } finally {
    await gw.close();
  }
});
