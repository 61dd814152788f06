/**
 * src/upstream/undici.ts loads undici's dispatchers from their own files, so that the gateway never
 * runs undici's index (fetch, WebSocket, caches, mocks). These are the package's own classes, with
 * the request methods its index adds; and a gateway built for every backend leaves the index unrun.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import * as undici from 'undici';
import { Agent, Pool } from '../../src/upstream/undici.js';

t.test('the classes are the ones the package exports', async () => {
  assert.equal(Pool, undici.Pool);
  assert.equal(Agent, undici.Agent);
});

t.test('an Agent has the request method the index adds (the webhook transport and the v1 passthrough use it)', async (t) => {
  const server = createServer((request, response) => response.end(`${request.method} ${request.url}`));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const agent = new Agent();
  t.teardown(() => agent.close());
  const { port } = server.address() as AddressInfo;
  const answer = await agent.request({ origin: `http://127.0.0.1:${port}`, path: '/in?x=1', method: 'POST', body: '{}' });
  assert.equal(answer.statusCode, 200);
  assert.equal(await answer.body.text(), 'POST /in?x=1');
});

t.test("loading the app and every backend leaves undici's index unrun", async () => {
  const child = `
    import { createRequire } from 'node:module';
    await import('./src/app.ts');
    await import('./mappings/index.ts');
    const require = createRequire(import.meta.url);
    const index = require.resolve('undici');
    const loaded = Object.keys(require.cache);
    process.stdout.write(JSON.stringify({ index: loaded.includes(index), pool: loaded.some((path) => path.endsWith('/undici/lib/dispatcher/pool.js')) }));
  `;
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', child], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(result.status, 0, result.stderr);
  assert.deepEqual(JSON.parse(result.stdout), { index: false, pool: true });
});
