/**
 * The CPUs the process's cgroup allows. Node 20's os.availableParallelism() counts the host's cores
 * (the affinity mask), not a CPU quota, so WORKERS=auto in a container limited to half a CPU, or in
 * a systemd unit with `CPUQuota=50%`, would start one worker per host core. The process's own
 * cgroup is named in /proc/self/cgroup (`/` inside a container with its own cgroup namespace, the
 * unit's path such as `/system.slice/gateway.service` on a host); a quota set on any cgroup above
 * it limits it too, so the smallest one on the way up to the root counts. cgroup v2 says it in
 * cpu.max (`<quota> <period>`, `max` for none), v1 in cpu.cfs_quota_us over cpu.cfs_period_us (-1
 * for none). Rounded up, at least one.
 */
import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

export const CGROUP_ROOT = '/sys/fs/cgroup';
export const SELF_CGROUP = '/proc/self/cgroup';

/** Whole CPUs the quota allows, or undefined when there is none (or nothing says). */
export function cgroupCpuLimit(root = CGROUP_ROOT, selfCgroup = SELF_CGROUP): number | undefined {
  const paths = ownPaths(read(selfCgroup) ?? '');
  const limits = [
    ...ancestors(paths.v2).map((dir) => v2Limit(join(root, dir))),
    ...['cpu', 'cpu,cpuacct'].flatMap((controller) => ancestors(paths.v1).map((dir) => v1Limit(join(root, controller, dir)))),
  ].filter((cpus): cpus is number => cpus !== undefined);
  return limits.length === 0 ? undefined : Math.min(...limits);
}

/** The process's cgroup path in the v2 hierarchy (`0::`) and in v1's cpu controller; `/` when unnamed. */
function ownPaths(selfCgroup: string): { v2: string; v1: string } {
  const paths = { v2: '/', v1: '/' };
  for (const line of selfCgroup.split('\n')) {
    const [id, controllers, path] = line.split(/:(.*?):/);
    if (path === undefined || !path.startsWith('/')) continue;
    if (id === '0' && controllers === '') paths.v2 = path;
    else if (controllers?.split(',').includes('cpu')) paths.v1 = path;
  }
  return paths;
}

/** `/a/b` → `/a/b`, `/a`, `/`: where a quota on the way up would limit the process. */
function ancestors(path: string): string[] {
  const dirs = [posix.normalize(path)];
  while (dirs.at(-1) !== '/') dirs.push(posix.dirname(dirs.at(-1)!));
  return dirs;
}

function v2Limit(dir: string): number | undefined {
  const [quota, period] = read(join(dir, 'cpu.max'))?.split(/\s+/) ?? [];
  return cpus(quota, period);
}

function v1Limit(dir: string): number | undefined {
  return cpus(read(join(dir, 'cpu.cfs_quota_us')), read(join(dir, 'cpu.cfs_period_us')));
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
