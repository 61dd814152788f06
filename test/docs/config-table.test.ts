/**
 * README "Configuration": its table names every environment variable the gateway reads
 * (src/load-config.ts, and each backend plugin's `env`). BACKEND and FOSSBILLING_* were read but
 * not in the table.
 */
import t from 'tap';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { BACKENDS } from '../../mappings/index.js';

const readme = readFileSync('README.md', 'utf8');
const section = /\n### Configuration\n([\s\S]*?)\n### /.exec(readme)?.[1] ?? '';
const tableRows = section.split('\n').filter((line) => line.startsWith('| `'));
const firstColumns = tableRows.map((row) => row.split('|')[1] ?? '').join(' ');

const source = readFileSync('src/load-config.ts', 'utf8');
const overrides = /const ENV_OVERRIDES[^=]*=\s*\[([\s\S]*?)\n\];/.exec(source)?.[1] ?? '';
const core = [...overrides.matchAll(/\['([A-Z0-9_]+)'/g)].map((match) => match[1] as string);
const backend = BACKENDS.flatMap((plugin) => plugin.env.map((variable) => variable.name));

t.test('the configuration table lists every environment variable', async () => {
  assert.ok(tableRows.length > 10, 'the table was found');
  assert.ok(core.includes('BACKEND') && core.includes('PORT'), 'the overrides were read');
  const missing = [...core, ...backend, 'CONFIG_FILE', 'SANDBOX', 'SANDBOX_PRINT_KEYS'].filter((name) => !firstColumns.includes(`\`${name}\``));
  assert.deepEqual(missing, []);
});
