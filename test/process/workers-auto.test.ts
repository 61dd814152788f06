/**
 * WORKERS=auto counts the CPUs a container's cgroup allows (cpu.max on cgroup v2, cfs_quota_us over
 * cfs_period_us on v1; rounded up, at least one), not only the cores the host has: on Node 20
 * os.availableParallelism() sees the host's cores, and a container limited to half a CPU started
 * one worker per host core.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { workerCount } from '../../src/workers.js';

function cgroupRoot(t: Test, files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'rg-review-cgroup-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

t.test('cgroup v2: half a CPU is one worker', async (t) => {
  assert.equal(workerCount('auto', cgroupRoot(t, { 'cpu.max': '50000 100000\n' })), 1);
});

t.test('cgroup v1: a quota of one period is one worker', async (t) => {
  const root = cgroupRoot(t, { 'cpu/cpu.cfs_quota_us': '100000\n', 'cpu/cpu.cfs_period_us': '100000\n' });
  assert.equal(workerCount('auto', root), 1);
});

t.test('no limit (v2 "max", v1 -1, no files), or a quota above the cores: the cores', async (t) => {
  const cores = availableParallelism();
  assert.equal(workerCount('auto', cgroupRoot(t, { 'cpu.max': 'max 100000\n' })), cores);
  assert.equal(workerCount('auto', cgroupRoot(t, { 'cpu/cpu.cfs_quota_us': '-1\n', 'cpu/cpu.cfs_period_us': '100000\n' })), cores);
  assert.equal(workerCount('auto', cgroupRoot(t, {})), cores);
  assert.equal(workerCount('auto', cgroupRoot(t, { 'cpu.max': `${(cores + 1) * 100000} 100000\n` })), cores);
});

t.test('a number is taken as it is', async (t) => {
  assert.equal(workerCount(3, cgroupRoot(t, { 'cpu.max': '50000 100000\n' })), 3);
});
