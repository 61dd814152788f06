/**
 * The CPUs a container's cgroup allows. Node 20's os.availableParallelism() counts the host's cores
 * (the affinity mask), not a CPU quota, so WORKERS=auto in a container limited to half a CPU would
 * start one worker per host core. Read where a container sees its own cgroup: cgroup v2's cpu.max
 * (`<quota> <period>`, `max` for none), else v1's cpu.cfs_quota_us over cpu.cfs_period_us (-1 for
 * none); rounded up, at least one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const CGROUP_ROOT = '/sys/fs/cgroup';

/** Whole CPUs the quota allows, or undefined when there is none (or nothing says). */
export function cgroupCpuLimit(root = CGROUP_ROOT): number | undefined {
  const v2 = read(join(root, 'cpu.max'))?.split(/\s+/);
  if (v2) return cpus(v2[0], v2[1]);
  for (const controller of ['cpu', 'cpu,cpuacct']) {
    const quota = read(join(root, controller, 'cpu.cfs_quota_us'));
    if (quota !== undefined) return cpus(quota, read(join(root, controller, 'cpu.cfs_period_us')));
  }
  return undefined;
}

function cpus(quota: string | undefined, period: string | undefined): number | undefined {
  const [q, p] = [Number(quota), Number(period)];
  if (!(q > 0 && p > 0)) return undefined;
  return Math.max(1, Math.ceil(q / p));
}

function read(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined;
  }
}
