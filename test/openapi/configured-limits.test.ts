/**
 * The document's account of the rate limits is the deployment's: an operator who configures other
 * limits than the defaults publishes those, the ones GET /v1/me reports and 429s enforce.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { buildTestGateway } from '../helpers/gateway.js';

const LIMITS = { keyPerMinute: 30, keyBurst: 5, keyPerDay: 1000, ipPerMinute: 300, accountPerMinute: 90 };

for (const profile of ['A', 'B'] as const) {
  t.test(`profile ${profile}: the configured limits, not the defaults`, async (t) => {
    const gw = await buildTestGateway({ profile, config: { rateLimits: LIMITS } });
    t.teardown(() => gw.close());
    const description = (await gw.app.inject({ url: '/v1/openapi.json' })).json().info.description as string;
    const me = await gw.app.inject({ url: '/v1/me', headers: { authorization: `Bearer ${gw.keys['acme:all']}` } });
    assert.deepEqual(me.json().key.rate_limits, { per_minute: 30, burst: 5, per_day: 1000, account_per_minute: profile === 'A' ? 90 : null });
    assert.match(description, /per key 30\/min with a burst of 5 \(6 at once from rest, then one every 2 s\) and 1,000 per UTC day; per source IP 300\/min/);
    assert.equal(/per account 90\/min/.test(description), profile === 'A');
    assert.doesNotMatch(description, /60\/min|5,000|600\/min|120\/min/);
  });

  t.test(`profile ${profile}: the configured idempotency windows`, async (t) => {
    const gw = await buildTestGateway({ profile, config: { idempotency: { replayWindowMs: 30 * 60_000, profileBWindowMs: 48 * 3_600_000 } } });
    t.teardown(() => gw.close());
    const description = (await gw.app.inject({ url: '/v1/openapi.json' })).json().info.description as string;
    assert.match(description, profile === 'A' ? /a key replays for 30 minutes, then answers 410/ : /records live 48 hours, after which the key is new again/);
  });
}
