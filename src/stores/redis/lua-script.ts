/**
 * A Lua script run with EVALSHA, falling back to EVAL when the server does not know it (NOSCRIPT:
 * script caches are empty after a restart or failover, and on each cluster node until first use).
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Beside this module: the build copies src/stores/redis/lua into dist (tsc copies no .lua files). */
const SCRIPT_DIRECTORY = new URL('./lua/', import.meta.url);

export class LuaScript {
  readonly sha: string;

  private constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /** Reads `lua/<name>.lua`, after the `shared` pieces it uses (`lua/<piece>.lua`, in order). */
  static load(name: string, ...shared: string[]): LuaScript {
    return new LuaScript([...shared, name].map(read).join('\n'));
  }
}

function read(name: string): string {
  const path = fileURLToPath(new URL(`${name}.lua`, SCRIPT_DIRECTORY));
  if (!existsSync(path)) throw new Error(`Lua script ${name} not found at ${path}`);
  return readFileSync(path, 'utf8');
}
