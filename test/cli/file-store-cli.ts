/**
 * The key CLI on a file key store of its own (a temp directory, the repo's config, no Redis), its
 * output collected: for tests that drive commands one after another on one store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { BACKENDS } from '../../mappings/index.js';
import { keysCli } from '../../src/cli/keys.js';

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

export function fileStoreCli(t: Test, name: string): (...args: string[]) => Promise<CliRun> {
  const dir = mkdtempSync(join(tmpdir(), `rg-${name}-`));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    KEYS_FILE: join(dir, 'keys.json'),
    AUDIT_LOG_FILE: join(dir, 'audit.log'),
    ADMIN_AUDIT_LOG_FILE: join(dir, 'admin-audit.log'),
    CONFIG_FILE: join(process.cwd(), 'config', 'gateway.json'),
  };
  delete env.REDIS_URL;
  return async (...args) => {
    let stdout = '';
    let stderr = '';
    const code = await keysCli(BACKENDS, args, { out: (text) => (stdout += text), err: (text) => (stderr += text), env });
    return { code, stdout, stderr };
  };
}
