/**
 * README "Benchmark": each `npm run bench*` script lists its flags with `-- --help` and exits 0,
 * without measuring anything. `bench:abort-signals` threw ERR_PARSE_ARGS_UNKNOWN_OPTION instead.
 */
import t from 'tap';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
const benches = Object.keys(scripts).filter((name) => name === 'bench' || name.startsWith('bench:'));

t.test('the README names the bench scripts this checks', async () => {
  assert.ok(benches.includes('bench:abort-signals'));
});

for (const name of benches) {
  t.test(`npm run ${name} -- --help prints its usage and exits 0`, async () => {
    const result = spawnSync('npm', ['run', '--silent', name, '--', '--help'], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(result.status, 0, `${name} --help exited ${result.status}: ${result.stderr}`);
    assert.match(result.stdout, new RegExp(`^npm run ${name.replace(':', '\\:')} `), result.stdout);
    assert.doesNotMatch(result.stdout + result.stderr, /node v\d|attempts each|MB\/min/, 'nothing is measured');
  });
}
