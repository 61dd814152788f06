/**
 * The `reseller-doctor` binary as an operator runs it against a simulator: its report and exit code
 * reach the shell, and it exits once done. Its checks and other exit codes are tested in this
 * process (test/cli/doctor-cli.test.ts).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { startWhmcsSimulator } from '../../simulators/whmcs/server.js';
import { doctorEnv } from '../helpers/doctor.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Asynchronous on purpose: the simulator answers from this very process. */
function runDoctor(env: NodeJS.ProcessEnv, ...args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/reseller-doctor.ts', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += String(chunk)));
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

t.test('reseller-doctor process: passes against the simulator (0); a bad config is 78', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-doctor-bin-'));
  const simulator = await startWhmcsSimulator();
  t.teardown(async () => {
    await simulator.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const env = doctorEnv(simulator, dir);
  const [run, badConfig] = await Promise.all([runDoctor(env), runDoctor({ ...env, PORT: 'eighty' })]);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.match(run.stdout, /checking the upstream, whmcs at http:\/\/127\.0\.0\.1:\d+ \(profile A\)/);
  assert.match(run.stdout, /6 pass \(exit code 0\)/);
  assert.doesNotMatch(run.stdout + run.stderr, new RegExp(simulator.secret), 'the secret is never printed');
  assert.equal(badConfig.code, 78);
  assert.match(badConfig.stderr, /PORT must be a whole number/);
});
