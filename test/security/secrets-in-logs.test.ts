/**
 * Every secret the gateway handles is used, at the most verbose log level, and none of them may
 * appear anywhere in the log output (contract §2, standards: no secret reaches a log).
 */
import assert from 'node:assert/strict';
import t from 'tap';
import type { InjectOptions } from 'fastify';
import { bearer, buildTestGateway, TEST_PEPPER, type TestGateway } from '../helpers/gateway.js';

t.test('no secret reaches the log', async (t) => {
  let gw: TestGateway;
  t.before(async () => {
    gw = await buildTestGateway({ config: { logLevel: 'trace' }, whmcs: { accessKey: 'access-KEY-0f9e8d7c6b5a' } });
  });
  t.teardown(() => gw.close());

  t.test('keys, passwords, webhook secrets, upstream credentials and the pepper stay out', async () => {
    const key = gw.keys['acme:all'] as string;
    const inject = (options: InjectOptions) => gw.app.inject(options);
    const secrets: string[] = [key, gw.keys['acme:revoked'] as string, TEST_PEPPER, gw.simulator.secret, gw.simulator.identifier, 'access-KEY-0f9e8d7c6b5a'];

    await inject({ method: 'GET', url: '/v1/me', headers: bearer(key) });
    await inject({ method: 'GET', url: '/v1/me', headers: bearer(gw.keys['acme:revoked']) });
    await inject({ method: 'GET', url: `/v1/services?api_key=${key}` });
    await inject({ method: 'GET', url: `/v1/services?page=1&token=${key}`, headers: bearer(key) });
    await inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Basic ${Buffer.from(`acme:${key}`).toString('base64')}` } });

    const credentials = await inject({ method: 'GET', url: '/v1/services/1/credentials', headers: bearer(key) });
    assert.equal(credentials.statusCode, 200);
    secrets.push(credentials.json().password);

    const webhook = await inject({
      method: 'PUT',
      url: '/v1/webhooks',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      payload: JSON.stringify({ url: 'https://hooks.example.com/x' }),
    });
    assert.equal(webhook.statusCode, 200);
    secrets.push(webhook.json().secret);

    // Upstream failures log operator detail: that detail must not carry credentials either.
    gw.simulator.inject({ kind: 'forbidden', message: 'Authentication Failed', times: 3 });
    await inject({ method: 'GET', url: '/v1/me', headers: bearer(key) });
    await inject({ method: 'GET', url: '/v1/services/1/credentials', headers: bearer(key) });
    gw.simulator.inject({ kind: 'malformed', times: 1 });
    await inject({ method: 'GET', url: '/v1/services/1/credentials', headers: bearer(key) });
    // A validation failure echoing a body with a secret-looking field.
    await inject({
      method: 'PUT',
      url: '/v1/webhooks',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      payload: JSON.stringify({ url: 'https://hooks.example.com/x', secret: key }),
    });

    const output = gw.logs.join('');
    assert.ok(gw.logs.length > 10, 'the log was actually written');
    assert.ok(output.includes('Authentication Failed'), 'operator detail is logged');
    for (const secret of secrets) {
      assert.ok(secret.length >= 8);
      assert.ok(!output.includes(secret), `a secret reached the log: ${secret.slice(0, 6)}…`);
      // The secret half of a key alone must not appear either.
      if (secret.startsWith('rk_')) assert.ok(!output.includes(secret.slice(20, 63)));
    }
  });
});
