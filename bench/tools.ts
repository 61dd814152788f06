/** The benchmark's outside tools: found on PATH, installed from Debian's package when missing and we may (root with apt), else a clear error naming them. */
import { spawnSync } from 'node:child_process';

export function findTool(command: string, debianPackage: string, needed: string): string {
  const which = () => spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).stdout.trim();
  const found = which();
  if (found) return found;
  const isRoot = process.getuid?.() === 0;
  if (isRoot && spawnSync('sh', ['-c', 'command -v apt-get'], { encoding: 'utf8' }).stdout.trim()) {
    process.stdout.write(`${command} not found: installing the Debian package (apt-get install -y ${debianPackage})…\n`);
    const install = spawnSync('sh', ['-c', `apt-get install -y ${debianPackage} || (apt-get update && apt-get install -y ${debianPackage})`], { stdio: 'inherit' });
    const after = which();
    if (install.status === 0 && after) return after;
  }
  throw new Error(`the benchmark needs ${needed}`);
}
