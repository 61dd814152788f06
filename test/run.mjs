// Node 20's test runner takes no globs, so collect the test files here and hand them over.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function collect(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : collect(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

const only = process.argv.slice(2);
const files = only.length > 0 ? only : collect('test').sort();
// The chaos tests load the machine on purpose: they run after the others, so that no timing-bound
// test shares the machine with them.
const isChaos = (path) => path.split(/[\\/]/).includes('chaos');
const groups = [files.filter((path) => !isChaos(path)), files.filter(isChaos)].filter((group) => group.length > 0);
let status = 0;
for (const group of groups) {
  const result = spawnSync(
    process.execPath,
    ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-concurrency=2', ...group],
    { stdio: 'inherit', env: { ...process.env, NODE_ENV: 'test' } },
  );
  if (result.status !== 0) status = result.status ?? 1;
}
process.exit(status);
