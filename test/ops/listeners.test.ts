/**
 * Both listeners bound how long a client may take to send its request (slow-client protection):
 * Node's server answers 408 and closes past it. Checked on the servers themselves, since Node looks
 * at open connections only every 30 s (connectionsCheckingInterval), too slow for a test to wait.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { buildOpsApp } from '../../src/ops/server.js';
import { buildTestGateway } from '../helpers/gateway.js';

t.test('the public and the ops listener give a client 30 s to send its request', async (t) => {
  const gw = await buildTestGateway();
  const ops = buildOpsApp(gw.app);
  t.teardown(async () => {
    await ops.close();
    await gw.close();
  });
  await ops.ready();
  assert.equal(gw.app.server.requestTimeout, 30_000);
  assert.equal(ops.server.requestTimeout, 30_000);
});
