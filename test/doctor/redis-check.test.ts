/**
 * `reseller-doctor` with Redis configured also reads what the gateway's start-up warns of: a Redis
 * that persists nothing (or evicts) is a WARN with its fix (exit code 3); one that keeps its data
 * passes. Without Redis (the memory stores) there is no Redis check.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { BACKENDS } from '../../mappings/index.js';
import { startWhmcsSimulator } from '../../simulators/whmcs/server.js';
import { doctorCli } from '../../src/cli/doctor.js';
import { doctorEnv } from '../helpers/doctor.js';
import { startRedisServer } from '../helpers/redis.js';

t.test('reseller-doctor and the configured Redis', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-doctor-redis-'));
  const simulator = await startWhmcsSimulator();
  t.teardown(async () => {
    await simulator.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const run = async (redisArgs: string[] | undefined): Promise<{ code: number; stdout: string }> => {
    const env = doctorEnv(simulator, dir);
    const redis = redisArgs ? await startRedisServer({ args: redisArgs }) : undefined;
    if (redis) env.REDIS_URL = redis.url;
    let stdout = '';
    try {
      const code = await doctorCli(BACKENDS, [], { out: (text) => (stdout += text), err: (text) => (stdout += text), env });
      return { code, stdout };
    } finally {
      await redis?.stop();
    }
  };

  t.test('a Redis persisting nothing: WARN naming it and the fix, exit code 3', async () => {
    const { code, stdout } = await run(['--save', '', '--appendonly', 'no']);
    assert.match(stdout, /^WARN {2}Redis/m, stdout);
    assert.match(stdout, /persists nothing at 127\.0\.0\.1:\d+/);
    assert.match(stdout, /appendonly yes/);
    assert.equal(code, 3, stdout);
  });

  t.test('a Redis with an append-only file: PASS, exit code 0', async () => {
    const { code, stdout } = await run(['--appendonly', 'yes']);
    assert.match(stdout, /^PASS {2}Redis/m, stdout);
    assert.equal(code, 0, stdout);
  });

  t.test('no Redis configured: no Redis check', async () => {
    const { code, stdout } = await run(undefined);
    assert.doesNotMatch(stdout, /Redis/);
    assert.equal(code, 0, stdout);
  });
});
