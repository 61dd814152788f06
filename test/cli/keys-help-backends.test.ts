/**
 * The key CLI's help (and the admin API's description of `upstream_id`) called the upstream
 * id "the WHMCS client id" whatever the backend. The gateway serves WHMCS, FOSSBilling and a v1
 * upstream (mappings/index.ts), and each knows the account's customer by its own id (README
 * "Backends", "The v1 passthrough"): the help names each backend's id, not WHMCS's alone.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { BACKENDS } from '../../mappings/index.js';
import { adminOpenApiDocument } from '../../src/admin/routes/index.js';
import { HELP } from '../../src/cli/keys-help.js';

const names = BACKENDS.map((backend) => backend.name);

t.test('the upstream id is described for every backend', async () => {
  assert.deepEqual(names, ['whmcs', 'fossbilling', 'v1'], 'the backends this test knows');
  const addHelp = HELP['account add'] as string;
  for (const name of names) assert.match(addHelp, new RegExp(`\\b${name}\\b`, 'i'), `account add --help names ${name}`);
  assert.match(addHelp, /v1\b[^.]*upstream\.v1\.apiKeys/, 'on v1 the upstream id picks the account\'s key in upstream.v1.apiKeys');
  for (const [command, text] of Object.entries(HELP)) {
    assert.doesNotMatch(text, /a WHMCS client\b|<clientid>|\(the WHMCS client id\)/, `${command || '(overview)'} --help names WHMCS as if it were the only backend`);
  }
  const doc = adminOpenApiDocument({ serverUrl: 'http://127.0.0.1:9464', profile: 'A' }) as {
    components: { schemas: Record<string, { properties?: Record<string, { description?: string }> }> };
  };
  const described = ['AdminAccount', 'AdminAccountInput'].map((id) => doc.components.schemas[id]?.properties?.upstream_id?.description ?? '');
  for (const text of described) for (const name of ['WHMCS', 'FOSSBilling', 'v1']) assert.match(text, new RegExp(name), `admin upstream_id description names ${name}: ${text}`);
});
