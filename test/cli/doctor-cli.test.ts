/**
 * `reseller-doctor` with the gateway's config (CONFIG_FILE plus environment) against a simulator:
 * its report and its exit codes. Run in this process (doctorCli with its output captured);
 * test/process/doctor-cli.test.ts runs the binary itself.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { BACKENDS } from '../../mappings/index.js';
import { startWhmcsSimulator, type WhmcsSimulator } from '../../simulators/whmcs/server.js';
import { doctorCli } from '../../src/cli/doctor.js';
import { doctorEnv } from '../helpers/doctor.js';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

async function runDoctor(env: NodeJS.ProcessEnv, ...args: string[]): Promise<Run> {
  let stdout = '';
  let stderr = '';
  const code = await doctorCli(BACKENDS, args, { out: (text) => (stdout += text), err: (text) => (stderr += text), env });
  return { code, stdout, stderr };
}

t.test('reseller-doctor', async (t) => {
  let dir: string;
  let simulator: WhmcsSimulator;
  let env: NodeJS.ProcessEnv;

  t.before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'rg-doctor-'));
    simulator = await startWhmcsSimulator();
    env = doctorEnv(simulator, dir);
  });
  t.teardown(async () => {
    await simulator.close();
    rmSync(dir, { recursive: true, force: true });
  });

  t.test('passes against the simulator: every check PASS, exit code 0', async () => {
    const run = await runDoctor(env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(run.stdout, /checking the upstream, whmcs at http:\/\/127\.0\.0\.1:\d+ \(profile A\)/);
    assert.match(run.stdout, /WHMCS at http:\/\/127\.0\.0\.1:\d+ accepted the credentials/);
    for (const title of ['API credentials', 'API role allows every action', 'order-key custom field', 'show the order-key field', 'cancel-revoke action', 'time zone']) {
      assert.match(run.stdout, new RegExp(`^PASS  .*${title}`, 'm'), title);
    }
    assert.match(run.stdout, /6 pass \(exit code 0\)/);
    assert.doesNotMatch(run.stdout + run.stderr, new RegExp(simulator.secret), 'the secret is never printed');
  });

  t.test('fails the order-key check with its fix, exit code 1, when the simulator hides custom fields', async () => {
    simulator.quirks.hideServiceCustomFields = true;
    try {
      const run = await runDoctor(env);
      assert.equal(run.code, 1, run.stdout + run.stderr);
      assert.match(run.stdout, /^FAIL  Service answers \(GetClientsProducts\) show the order-key field$/m);
      assert.match(run.stdout, /^ {6}Fix: Make GetClientsProducts return each service's "customfields"/m);
      assert.match(run.stdout, /While this fails, POST \/v1\/orders answers 503 backend_misconfigured\./);
      assert.match(run.stdout, /5 pass, 1 fail \(exit code 1\)/);

      const json = await runDoctor(env, '--json');
      assert.equal(json.code, 1);
      const report = JSON.parse(json.stdout);
      assert.equal(report.ok, false);
      assert.equal(report.exit_code, 1);
      assert.equal(report.backend, 'whmcs');
      const visible = report.checks.find((check: { id: string }) => check.id === 'order-key-visible');
      assert.equal(visible.status, 'fail');
      assert.deepEqual(visible.blocks, ['orders']);
      assert.match(visible.fix, /customfields/);
    } finally {
      simulator.quirks.hideServiceCustomFields = false;
    }
  });

  t.test('bad credentials: exit code 1 and the credentials fix', async () => {
    const run = await runDoctor({ ...env, WHMCS_SECRET: 'not-the-secret' });
    assert.equal(run.code, 1);
    assert.match(run.stdout, /^FAIL  WHMCS accepts the gateway's API credentials$/m);
    assert.match(run.stdout, /Fix: Set WHMCS_IDENTIFIER and WHMCS_SECRET/);
    assert.match(run.stdout, /^SKIP  /m);
  });

  t.test('--json is JSON for a backend without checks too (the v1 passthrough): no checks, exit code 0', async () => {
    const configFile = join(dir, 'v1.json');
    writeFileSync(configFile, JSON.stringify({ profile: 'A', upstream: { backend: 'v1', v1: { url: 'http://127.0.0.1:1/' } } }));
    const { WHMCS_IDENTIFIER: _identifier, WHMCS_SECRET: _secret, ...rest } = env;
    const run = await runDoctor({ ...rest, CONFIG_FILE: configFile, V1_UPSTREAM_API_KEYS: `1=rk_0123456789abcdef_${'a'.repeat(43)}` }, '--json');
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), { ok: true, exit_code: 0, backend: 'v1', counts: { pass: 0, fail: 0, warn: 0, skip: 0 }, checks: [] });
  });

  t.test('--help prints the usage and the exit codes; a bad option is exit code 2; a bad config is 78', async () => {
    const help = await runDoctor(env, '--help');
    assert.equal(help.code, 0);
    assert.match(help.stdout, /usage: reseller-doctor/);
    assert.match(help.stdout, /exit codes:/);
    const bad = await runDoctor(env, '--frobnicate');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /usage: reseller-doctor/);
    const badConfig = await runDoctor({ ...env, PORT: 'eighty' });
    assert.equal(badConfig.code, 78);
    assert.match(badConfig.stderr, /PORT must be a whole number/);
  });
});
