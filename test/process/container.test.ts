/**
 * The container's behaviour without Docker: the image's entry (`bin/gateway.ts`, compiled there to
 * dist/bin/gateway.js) with the image's environment (Dockerfile: NODE_ENV=production, HOST=0.0.0.0,
 * no config file). Without an upstream it must stop with EX_CONFIG and say what to set; the
 * sandbox runs only when asked, and on a non-loopback address prints no key unless asked.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { parse } from 'yaml';
import { BACKENDS } from '../../mappings/index.js';
import { loadConfig } from '../../src/load-config.js';
import { call } from '../helpers/http.js';

const ENTRY = ['--import', 'tsx', 'bin/gateway.ts'];

function imageEnv(dir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    NODE_ENV: 'production',
    HOST: '0.0.0.0',
    PORT: '0',
    OPS_PORT: '0',
    // No CONFIG_FILE: the image has none; here the default config/gateway.json has no upstream either.
    AUDIT_LOG_FILE: join(dir, 'audit.log'),
    KEYS_FILE: join(dir, 'keys.json'),
    LOG_LEVEL: 'warn',
    ...extra,
  };
}

/** Starts the entry, waits for the sandbox banner, and returns its output and base URL. */
async function startSandbox(env: NodeJS.ProcessEnv): Promise<{ output: () => string; base: string; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, ENTRY, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk) => (output += String(chunk)));
  child.stderr.on('data', (chunk) => (output += String(chunk)));
  const port = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner:\n${output}`)), 60_000);
    const check = () => {
      const match = /sandbox \(profile [AB], \w+ store\) on http:\/\/[^:]+:(\d+)/.exec(output);
      if (match && /\n\n$/.test(output)) {
        clearTimeout(timer);
        resolve(match[1] as string);
      } else if (child.exitCode !== null) reject(new Error(`exited ${child.exitCode}:\n${output}`));
      else setTimeout(check, 50);
    };
    check();
  });
  return {
    output: () => output,
    base: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', (code) => resolve(code));
        child.kill('SIGTERM');
      }),
  };
}

t.test('container entry, image environment', async (t) => {
  let dir: string;
  t.before(() => {
    dir = mkdtempSync(join(tmpdir(), 'rg-container-'));
  });
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));

  t.test('without an upstream it exits 78 and says what to set, starting nothing', async () => {
    const env = imageEnv(dir);
    const result = spawnSync(process.execPath, ENTRY, { env, encoding: 'utf8', timeout: 60_000 });
    assert.equal(result.status, 78, result.stderr);
    for (const name of [
      'WHMCS_URL', 'WHMCS_IDENTIFIER', 'WHMCS_SECRET', 'FOSSBILLING_URL', 'FOSSBILLING_API_TOKEN', 'V1_UPSTREAM_URL',
      'V1_UPSTREAM_API_KEYS', 'KEY_PEPPER', 'WEBHOOK_ENCRYPTION_KEY', 'CONFIG_FILE', 'SANDBOX=1',
    ]) {
      assert.ok(result.stderr.includes(name), `names ${name}: ${result.stderr}`);
    }
    assert.equal(result.stdout, '', 'no banner, no key');
  });

  t.test('SANDBOX=1 on 0.0.0.0 runs the sandbox but prints no key', async () => {
    const sandbox = await startSandbox(imageEnv(dir, { SANDBOX: '1' }));
    try {
      assert.doesNotMatch(sandbox.output(), /rk_/);
      assert.match(sandbox.output(), /not printed: 0\.0\.0\.0 is not a loopback address.*\n.*SANDBOX_PRINT_KEYS=1/);
      assert.equal((await call(sandbox.base, 'GET', '/v1/health')).status, 200);
    } finally {
      assert.equal(await sandbox.stop(), 0);
    }
  });

  t.test('SANDBOX_PRINT_KEYS=1 prints working keys on a non-loopback address', async () => {
    const sandbox = await startSandbox(imageEnv(dir, { SANDBOX: '1', SANDBOX_PRINT_KEYS: '1' }));
    try {
      const key = /acme\s+sandbox-all\s+(rk_\S+)/.exec(sandbox.output())?.[1];
      assert.ok(key, sandbox.output());
      assert.equal((await call(sandbox.base, 'GET', '/v1/me', { key })).status, 200);
    } finally {
      assert.equal(await sandbox.stop(), 0);
    }
  });

  t.test('SANDBOX=0 (or anything but 1/true) is not a request for the sandbox', async () => {
    const env = imageEnv(dir, { SANDBOX: '0' });
    const result = spawnSync(process.execPath, ENTRY, { env, encoding: 'utf8', timeout: 60_000 });
    assert.equal(result.status, 78, result.stderr);
  });
});

t.test('the Dockerfile and docker-compose.yml pass their lint (scripts/lint-container.mjs)', async () => {
  const result = spawnSync(process.execPath, ['scripts/lint-container.mjs'], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(result.status, 0, result.stdout + result.stderr);
  assert.match(result.stdout, /Dockerfile: no problems/);
  assert.match(result.stdout, /docker-compose\.yml: valid against the Compose Specification/);
});

/** The ENV of the Dockerfile's last stage (the image), as `KEY=value` pairs. */
function imageEnvironment(): Record<string, string> {
  const dockerfile = readFileSync('Dockerfile', 'utf8');
  const last = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const instruction = /^ENV ((?:.*\\\n)*.*)$/m.exec(last)?.[1] ?? '';
  return Object.fromEntries(instruction.split(/\\\n|\s+/).filter((pair) => pair.includes('=')).map((pair) => pair.trim().split('=') as [string, string]));
}

t.test('the image writes only to its volume, and each compose service\'s environment loads its config', async () => {
  const image = imageEnvironment();
  const config = loadConfig(BACKENDS, { ...image, SANDBOX: '1' });
  for (const [name, file] of Object.entries({ audit: config.audit.file, admin: config.admin.auditFile, keys: config.keys.file })) {
    assert.ok(file.startsWith('/var/lib/reseller-gateway/'), `${name}: ${file} is on the volume`);
  }
  const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true }) as { services: Record<string, { environment?: Record<string, string>; command?: unknown }> };
  for (const name of ['gateway', 'demo-keys']) {
    const environment = { ...image, ...compose.services[name]?.environment };
    // The compose file mounts config/demo.json at /app/config/demo.json.
    const loaded = loadConfig(BACKENDS, { ...environment, CONFIG_FILE: (environment.CONFIG_FILE ?? '').replace(/^\/app\//, '') });
    assert.equal(loaded.upstream?.backend, 'whmcs', `${name}: the demo serves the WHMCS simulator`);
  }
});

t.test("the image's collector: the Dockerfile's CMD and npm start give node the same --max-semi-space-size and --single-threaded-gc", async () => {
  // Both are node command-line options (the young generation's size can be set nowhere else:
  // src/startup/heap.ts); cluster workers inherit the primary's.
  const options = [/^--max-semi-space-size=\d+$/, /^--single-threaded-gc$/];
  const cmd = /^CMD (\[.*\])$/m.exec(readFileSync('Dockerfile', 'utf8'))?.[1] ?? '[]';
  const image = JSON.parse(cmd) as string[];
  const start = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start.split(/\s+/);
  for (const option of options) {
    const given = image.find((arg) => option.test(arg));
    assert.ok(given, `the Dockerfile's CMD sets ${option}: ${cmd}`);
    assert.equal(start.find((arg) => option.test(arg)), given, `npm start passes ${given}`);
  }
});
