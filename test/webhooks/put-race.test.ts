/**
 * Two PUT /v1/webhooks of one account at once: each reads the record, then writes it. Every secret
 * handed out must be one that signs: the stored secret, or the previous one of a rotation.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { buildTestGateway, type TestGateway } from '../helpers/gateway.js';
import { readTogether } from '../helpers/read-together.js';
import { secretBoxFor } from '../../src/webhooks/secret-box.js';

async function putTwice(gw: TestGateway, payload: object): Promise<string[]> {
  const headers = { authorization: `Bearer ${gw.keys['acme:all']}`, 'content-type': 'application/json' };
  const answers = await Promise.all([1, 2].map(() => gw.app.inject({ method: 'PUT', url: '/v1/webhooks', headers, payload })));
  for (const answer of answers) assert.equal(answer.statusCode, 200, answer.body);
  return answers.flatMap((answer) => {
    const secret = (answer.json() as { secret?: string }).secret;
    return secret === undefined ? [] : [secret];
  });
}

t.test('two first PUTs at once hand out one secret, the one stored', async (t) => {
  const gw = await buildTestGateway();
  t.teardown(() => gw.close());
  const box = secretBoxFor(gw.config);
  gw.stores.webhooks.get = readTogether(gw.stores.webhooks.get.bind(gw.stores.webhooks));
  const secrets = await putTwice(gw, { url: 'https://hooks.example.com/a' });
  const stored = await gw.stores.webhooks.get('acme');
  assert.deepEqual(secrets, [box.open(stored!.secret)], 'the only secret shown signs the deliveries');
});

t.test('two rotations at once: both new secrets sign, one as the current and one as the previous', async (t) => {
  const gw = await buildTestGateway();
  t.teardown(() => gw.close());
  const box = secretBoxFor(gw.config);
  const headers = { authorization: `Bearer ${gw.keys['acme:all']}`, 'content-type': 'application/json' };
  const first = await gw.app.inject({ method: 'PUT', url: '/v1/webhooks', headers, payload: { url: 'https://hooks.example.com/a' } });
  assert.equal(first.statusCode, 200);
  gw.stores.webhooks.get = readTogether(gw.stores.webhooks.get.bind(gw.stores.webhooks));
  const secrets = await putTwice(gw, { url: 'https://hooks.example.com/a', rotate_secret: true });
  assert.equal(secrets.length, 2);
  const stored = await gw.stores.webhooks.get('acme');
  const signing = [box.open(stored!.secret), box.open(stored!.previousSecret!)];
  assert.deepEqual([...secrets].sort(), [...signing].sort(), 'each rotation\'s secret signs for the overlap at least');
});
