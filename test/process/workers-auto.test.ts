/**
 * WORKERS=auto counts the CPUs the process's cgroup allows (cpu.max on cgroup v2, cfs_quota_us over
 * cfs_period_us on v1; rounded up, at least one), not only the cores the host has: on Node 20
 * os.availableParallelism() sees the host's cores, and a container limited to half a CPU started
 * one worker per host core. The cgroup is the one /proc/self/cgroup names (a systemd unit's on a
 * host), and a quota on a cgroup above it counts too. A quota that is not a whole number of CPUs
 * is rounded up; one without its period is none.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { cgroupCpuLimit } from '../../src/startup/cpu-limit.js';
import { workerCount } from '../../src/workers.js';

/** A cgroup tree under a temp root; its `self` file stands for /proc/self/cgroup (`0::/`, a container's, unless given). */
function cgroupRoot(t: Test, files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'rg-cgroup-'));
  files = { self: '0::/\n', ...files };
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const auto = (root: string): number => workerCount('auto', root, join(root, 'self'));
const limit = (root: string): number | undefined => cgroupCpuLimit(root, join(root, 'self'));

t.test('cgroup v2: half a CPU is one worker', async (t) => {
  assert.equal(auto(cgroupRoot(t, { 'cpu.max': '50000 100000\n' })), 1);
});

t.test('cgroup v1: a quota of one period is one worker', async (t) => {
  const root = cgroupRoot(t, { 'cpu/cpu.cfs_quota_us': '100000\n', 'cpu/cpu.cfs_period_us': '100000\n' });
  assert.equal(auto(root), 1);
});

t.test('no limit (v2 "max", v1 -1, no files), or a quota above the cores: the cores', async (t) => {
  const cores = availableParallelism();
  assert.equal(auto(cgroupRoot(t, { 'cpu.max': 'max 100000\n' })), cores);
  assert.equal(auto(cgroupRoot(t, { 'cpu/cpu.cfs_quota_us': '-1\n', 'cpu/cpu.cfs_period_us': '100000\n' })), cores);
  assert.equal(auto(cgroupRoot(t, {})), cores);
  assert.equal(auto(cgroupRoot(t, { 'cpu.max': `${(cores + 1) * 100000} 100000\n` })), cores);
});

t.test('a number is taken as it is', async (t) => {
  const root = cgroupRoot(t, { 'cpu.max': '50000 100000\n' });
  assert.equal(workerCount(3, root, join(root, 'self')), 3);
});

t.test('a systemd unit on a host: the quota of the cgroup /proc/self/cgroup names', async (t) => {
  const unit = 'system.slice/gateway.service';
  const self = '0::/system.slice/gateway.service\n';
  assert.equal(auto(cgroupRoot(t, { self, 'cpu.max': 'max 100000\n', [`${unit}/cpu.max`]: '50000 100000\n' })), 1);
});

t.test('a quota on a cgroup above the process limits it too', async (t) => {
  const self = '0::/system.slice/gateway.service\n';
  const files = { self, 'system.slice/cpu.max': '100000 100000\n', 'system.slice/gateway.service/cpu.max': 'max 100000\n' };
  assert.equal(auto(cgroupRoot(t, files)), 1);
});

t.test('cgroup v1 on a host: the cpu controller\'s path for the process', async (t) => {
  const self = '12:memory:/user.slice\n4:cpu,cpuacct:/system.slice/gateway.service\n0::/\n';
  const dir = 'cpu,cpuacct/system.slice/gateway.service';
  const files = { self, [`${dir}/cpu.cfs_quota_us`]: '50000\n', [`${dir}/cpu.cfs_period_us`]: '100000\n' };
  assert.equal(auto(cgroupRoot(t, files)), 1);
});

t.test('a container without its own cgroup namespace: the path it is named by is not mounted, its root counts', async (t) => {
  const self = '0::/docker/0123abcd\n';
  assert.equal(auto(cgroupRoot(t, { self, 'cpu.max': '50000 100000\n' })), 1);
});

t.test('cgroup v1 mounted as cpu,cpuacct only: its quota counts', async (t) => {
  const root = cgroupRoot(t, { 'cpu,cpuacct/cpu.cfs_quota_us': '250000\n', 'cpu,cpuacct/cpu.cfs_period_us': '100000\n' });
  assert.equal(limit(root), 3);
  assert.equal(auto(root), Math.min(availableParallelism(), 3));
});

t.test('a quota of one and a half CPUs is two workers (rounded up), on v2 and on v1', async (t) => {
  assert.equal(limit(cgroupRoot(t, { 'cpu.max': '150000 100000\n' })), 2);
  assert.equal(limit(cgroupRoot(t, { 'cpu/cpu.cfs_quota_us': '150000\n', 'cpu/cpu.cfs_period_us': '100000\n' })), 2);
});

t.test('a v1 quota without its period, or a v2 quota without one, is no limit: the cores, a number', async (t) => {
  const root = cgroupRoot(t, { 'cpu/cpu.cfs_quota_us': '50000\n' });
  assert.equal(limit(root), undefined);
  assert.equal(auto(root), availableParallelism());
  assert.equal(limit(cgroupRoot(t, { 'cpu.max': '50000\n' })), undefined);
});
