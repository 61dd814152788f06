// The test suite under tap (configuration in .taprc): `node test/run.mjs` runs every test/**/*.test.ts
// and enforces the coverage floor; `node test/run.mjs test/a.test.ts …` runs only those files, without
// coverage. The chaos tests load the machine on purpose: they run in a second pass, after the others,
// so that no timing-bound test shares the machine with them.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const tapPackage = createRequire(import.meta.url).resolve('tap/package.json');
const TAP = join(dirname(tapPackage), JSON.parse(readFileSync(tapPackage, 'utf8')).bin.tap);
const COVERAGE = '.tap/coverage';
const EARLIER = '.tap/coverage-earlier-pass';

function collect(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : collect(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

/**
 * Runs tap. On a terminal its live report goes straight there; otherwise (CI, a pipe) its output is
 * passed through and its closing count (`# { total: 25, pass: 24, fail: 1 }`) read, so that the run
 * can end on one plain `passed, failed` line.
 */
function tap(args) {
  const terminal = process.stdout.isTTY === true;
  const result = spawnSync(process.execPath, [TAP, ...args], {
    stdio: ['inherit', terminal ? 'inherit' : 'pipe', 'inherit'],
    // Without a terminal, tap's reporter draws its progress only when it knows it is in CI.
    env: { ...process.env, NODE_ENV: 'test', ...(terminal ? {} : { CI: process.env.CI ?? 'true' }) },
    maxBuffer: 256 * 1024 * 1024,
  });
  const output = result.stdout?.toString() ?? '';
  process.stdout.write(output);
  const counts = /^# (\{ total: .*\})$/m.exec(output)?.[1] ?? '{}';
  const count = (key) => Number(new RegExp(`\\b${key}: (\\d+)`).exec(counts)?.[1] ?? 0);
  return { status: result.status ?? 1, terminal, pass: count('pass'), fail: count('fail') };
}

/** The gateway as built (`npm start`, the image): its coverage is not counted, see prepareCoverage. */
const BUILT = pathToFileURL(join(dirname(fileURLToPath(import.meta.url)), '..', 'dist')).href + '/';

/**
 * Readies what the test processes wrote for `tap report`:
 * - Only the sources as tsx runs them are counted. A process test that starts the built gateway
 *   (dist/, mapped back to src/ through its source maps) added tsc's functions beside tsx's for
 *   the same files, which have other boundaries: 120–250 more functions per such process, mostly
 *   unreached, and their number moved with how many of those processes wrote their coverage
 *   before exiting (1 461 to 1 663 functions counted, 89.9–95.3 % of them covered, for the same
 *   code).
 * - tsx's source maps reach @tapjs/processinfo without the text of their sources (`sourcesContent:
 *   [null]`), and c8 then maps each file to a single statement. The sources are the files on disk.
 */
function prepareCoverage() {
  for (const name of readdirSync(COVERAGE)) {
    const path = join(COVERAGE, name);
    const coverage = JSON.parse(readFileSync(path, 'utf8'));
    coverage.result = (coverage.result ?? []).filter(({ url }) => !url.startsWith(BUILT));
    for (const url of Object.keys(coverage['source-map-cache'] ?? {})) {
      if (url.startsWith(BUILT)) delete coverage['source-map-cache'][url];
    }
    for (const { data } of Object.values(coverage['source-map-cache'] ?? {})) {
      if (!data?.sources || data.sourcesContent?.every((content) => typeof content === 'string')) continue;
      data.sourcesContent = data.sources.map((source, index) => {
        const known = data.sourcesContent?.[index];
        if (typeof known === 'string') return known;
        const file = source.startsWith('file:') ? fileURLToPath(source) : source;
        return existsSync(file) ? readFileSync(file, 'utf8') : null;
      });
    }
    writeFileSync(path, JSON.stringify(coverage));
  }
}

const only = process.argv.slice(2);
const whole = only.length === 0;
const files = whole ? collect('test').sort() : only;
const isChaos = (path) => path.split(/[\\/]/).includes('chaos');
const passes = [files.filter((path) => !isChaos(path)), files.filter(isChaos)].filter((group) => group.length > 0);

// The whole suite collects coverage; the floor is checked once both passes are in (`tap report`).
const coverageArgs = whole ? ['--coverage-report=none', '--allow-incomplete-coverage'] : ['--disable-coverage'];
let status = 0;
let pass = 0;
let fail = 0;
let terminal = false;
rmSync(EARLIER, { recursive: true, force: true });
// tap builds the plugin set of .taprc (without its TypeScript and mock loaders) during the first run
// in a fresh checkout, but that run still starts every test process with the default set's loaders:
// about 2.5 s more per file, five minutes over the suite. Built first, every run gets the set asked for.
if (whole) {
  const build = spawnSync(process.execPath, [TAP, 'build'], { stdio: ['ignore', 'ignore', 'inherit'] });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
for (const [index, group] of passes.entries()) {
  // Each tap run starts by clearing .tap/coverage: keep what the earlier pass measured.
  if (whole && index > 0 && existsSync(COVERAGE)) renameSync(COVERAGE, EARLIER);
  const result = tap(['run', ...coverageArgs, ...group]);
  if (existsSync(EARLIER)) {
    mkdirSync(COVERAGE, { recursive: true });
    for (const name of readdirSync(EARLIER)) renameSync(join(EARLIER, name), join(COVERAGE, name));
    rmSync(EARLIER, { recursive: true, force: true });
  }
  if (result.status !== 0) status = result.status;
  terminal = result.terminal;
  pass += result.pass;
  fail += result.fail;
}

if (whole) {
  prepareCoverage();
  // The floor (statements, branches, functions, lines in .taprc): below it, `tap report` fails.
  const report = spawnSync(process.execPath, [TAP, 'report', 'text-summary', 'html'], { stdio: 'inherit' });
  if (report.status !== 0) {
    console.error('coverage is below the floor in .taprc (statements, branches, functions, lines)');
    status = status || report.status || 1;
  }
}
if (!terminal) console.log(`tests: ${pass} passed, ${fail} failed`);
process.exit(status);
