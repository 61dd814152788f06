/**
 * A port already in use stops the start with exit 1 (README "All cores": "as a single process
 * stops"), and the message names the setting that moves the listener, without a stack trace: a
 * second sandbox started with only PORT changed found the ops port taken and printed Node's stack.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';

async function takenPort(t: Test): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}

function boot(t: Test, ports: { PORT: string; OPS_PORT: string }): { status: number | null; stderr: string } {
  const dir = mkdtempSync(join(tmpdir(), 'rg-review-port-taken-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SANDBOX: '1',
    HOST: '127.0.0.1',
    OPS_HOST: '127.0.0.1',
    ...ports,
    KEYS_FILE: join(dir, 'keys.json'),
    AUDIT_LOG_FILE: join(dir, 'audit.log'),
    ADMIN_AUDIT_LOG_FILE: join(dir, 'admin-audit.log'),
    LOG_LEVEL: 'warn',
  };
  delete env.REDIS_URL;
  delete env.WORKERS;
  return spawnSync(process.execPath, ['--import', 'tsx', 'bin/gateway.ts'], { env, encoding: 'utf8', timeout: 60_000 });
}

t.test('the ops port taken: exit 1, naming OPS_PORT and the address, no stack trace', async (t) => {
  const port = await takenPort(t);
  const result = boot(t, { PORT: '0', OPS_PORT: String(port) });
  assert.equal(result.status, 1, result.stderr);
  assert.match(result.stderr, new RegExp(`127\\.0\\.0\\.1:${port} is in use`));
  assert.match(result.stderr, /the ops listener: set OPS_PORT/);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
});

t.test('the public port taken: exit 1, naming PORT', async (t) => {
  const port = await takenPort(t);
  const result = boot(t, { PORT: String(port), OPS_PORT: '0' });
  assert.equal(result.status, 1, result.stderr);
  assert.match(result.stderr, new RegExp(`127\\.0\\.0\\.1:${port} is in use`));
  assert.match(result.stderr, /the public listener: set PORT/);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
});
