// `npm start`: compiles only when a source is newer than the last build, then runs the compiled
// gateway in this same process (one Node start-up, not two), so a second start is about as fast as
// `node dist/bin/gateway.js`. It asks for the sandbox (SANDBOX=1) unless SANDBOX is set: a fresh
// checkout gets the demo, while the production entry without config stops (src/startup/mode.ts).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const STAMP = 'dist/.build-stamp';
const SOURCES = ['bin', 'src', 'mappings', 'simulators', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'];

function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return readdirSync(path).reduce((newest, name) => Math.max(newest, newestMtime(join(path, name))), stat.mtimeMs);
}

function isStale() {
  if (!existsSync(STAMP)) return true;
  const built = statSync(STAMP).mtimeMs;
  return SOURCES.some((source) => newestMtime(source) > built);
}

if (isStale()) {
  const started = new Date();
  // A first build takes half a minute or more, with nothing else printed: say why nothing happens yet.
  process.stderr.write('reseller-gateway: compiling to dist/ first (a source is newer than the last build; this takes a while)…\n');
  const build = spawnSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
  // Stamped with the time the build began: a source saved during the build counts as newer.
  writeFileSync(STAMP, `${started.toISOString()}\n`);
  utimesSync(STAMP, started, started);
}

process.env.SANDBOX ??= '1';
process.setSourceMapsEnabled(true);
await import(pathToFileURL(join(process.cwd(), 'dist/bin/gateway.js')).href);
