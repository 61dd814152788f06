/**
 * An endpoint set anew or enabled again hears of changes from then on (reference W9: events of a
 * disabled period are not queued for later). The detector's baseline mark is what makes its next
 * look report changes: a PUT that sets an unset or disabled endpoint drops it, a PUT on an enabled
 * endpoint keeps it.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { BASELINE_FIELD } from '../../src/webhooks/emitter.js';
import { buildTestGateway } from '../helpers/gateway.js';

const URL_A = 'https://hooks.example.com/a';

t.test('PUT /v1/webhooks and the detector\'s baseline mark', async (t) => {
  const gw = await buildTestGateway();
  t.teardown(() => gw.close());
  const put = (url: string | null) =>
    gw.app.inject({ method: 'PUT', url: '/v1/webhooks', headers: { authorization: `Bearer ${gw.keys['acme:all']}`, 'content-type': 'application/json' }, payload: { url } });
  const mark = () => gw.stores.webhooks.readSnapshotState('acme', BASELINE_FIELD);
  /** A detector pass over the account took its look (its mark, with a state it recorded). */
  const looked = async () => {
    await gw.stores.webhooks.recordSnapshot('acme', BASELINE_FIELD, null, new Date().toISOString());
    await gw.stores.webhooks.recordSnapshot('acme', 'service:1', null, 'active');
  };

  t.test('a PUT on an enabled endpoint keeps the mark: changes since the last look are still news', async () => {
    assert.equal((await put(URL_A)).statusCode, 200);
    await looked();
    assert.equal((await put('https://hooks.example.com/b')).statusCode, 200);
    assert.notEqual(await mark(), null);
  });

  t.test('a PUT on a disabled endpoint drops it: the next look is a baseline', async () => {
    await gw.stores.webhooks.disable('acme', 'https://hooks.example.com/b', 'failing');
    const answer = await put('https://hooks.example.com/b');
    assert.equal(answer.statusCode, 200);
    assert.equal(answer.json().status, 'enabled');
    assert.equal(await mark(), null);
    assert.equal((await gw.stores.webhooks.readSnapshotState('acme', 'service:1'))?.state, 'active', 'the states stay: a baseline records over them');
  });

  t.test('a PUT after an unset drops a mark a pass wrote back after the unset', async () => {
    await looked();
    assert.equal((await put(null)).statusCode, 200);
    // A pass that began before the unset records its look afterwards.
    await looked();
    assert.equal((await put(URL_A)).statusCode, 200);
    assert.equal(await mark(), null);
  });
});
