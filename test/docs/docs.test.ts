/**
 * The README and docs/ stand alone: their generated tables match the code (scripts/docs.ts), every
 * link stays inside the repository and reaches a file that exists, and every repository path they
 * name in backticks exists.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import t from 'tap';

const ROOT = process.cwd();
const FILES = ['README.md', ...readdirSync('docs').filter((name) => name.endsWith('.md')).map((name) => join('docs', name))];
/** Top-level entries whose paths the docs may name; `data/` is made at run time, so it is not here. */
const REPO_ROOTS = /^(bin|src|test|docs|config|mappings|simulators|scripts|bench|\.ci)\/|^(Dockerfile|docker-compose\.yml|package\.json|redocly\.yaml|\.spectral\.yaml)$/;

t.test('the generated tables match the code', async () => {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/docs.ts', '--check'], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(result.status, 0, result.stdout + result.stderr);
});

t.test('links stay inside the repository and reach files that exist', async () => {
  for (const file of FILES) {
    const text = readFileSync(file, 'utf8');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const where = `${file} → ${target}`;
      assert.doesNotMatch(target as string, /^[a-z]+:/i, `${where}: no link leaves the repository`);
      const path = resolve(dirname(file), (target as string).replace(/#.*$/, ''));
      assert.ok(!relative(ROOT, path).startsWith('..'), `${where}: outside the repository`);
      assert.ok(existsSync(path), `${where}: no such file`);
    }
  }
});

t.test('every repository path named in backticks exists', async () => {
  for (const file of FILES) {
    const text = readFileSync(file, 'utf8');
    // Backticked paths, and paths with an extension anywhere (command lines in code blocks too).
    const tokens = [...text.matchAll(/`([^`\s]+)`/g), ...text.matchAll(/(?<![\w./-])((?:bin|src|test|docs|config|mappings|simulators|scripts|bench)\/[\w./-]*\.\w+)/g)];
    for (const [, token] of tokens) {
      const path = (token as string).replace(/[:#].*$/, '').replace(/[.,]$/, '');
      if (!REPO_ROOTS.test(path) || path.includes('<') || path.includes('*')) continue;
      assert.ok(existsSync(path), `${file} names ${path}, which does not exist`);
    }
  }
});
