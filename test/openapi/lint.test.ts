/**
 * CI's OpenAPI lint: the document of both profiles, and the admin API's, through Redocly
 * (recommended) and Spectral (spectral:oas) at 0 errors and 0 warnings (scripts/lint-openapi.mjs;
 * both tools pinned). Spectral also checks every example against its schema.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import t from 'tap';

t.test('Redocly and Spectral find no error and no warning in either profile, nor in the admin API', async () => {
  const result = spawnSync(process.execPath, ['scripts/lint-openapi.mjs'], { encoding: 'utf8', timeout: 300_000 });
  assert.equal(result.status, 0, `${result.stdout}\n${result.stderr}`);
  assert.match(result.stdout, /profile A: redocly 0 errors, 0 warnings; spectral 0 problems/);
  assert.match(result.stdout, /profile B: redocly 0 errors, 0 warnings; spectral 0 problems/);
  assert.match(result.stdout, /admin API: redocly 0 errors, 0 warnings; spectral 0 problems/);
});
