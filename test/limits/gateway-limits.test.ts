/**
 * Rate limits as clients see them (contract §3–§4), with an injected clock: nothing sleeps.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { bearer, buildTestGateway } from '../helpers/gateway.js';

function clock(start = Date.UTC(2026, 10, 22, 12, 0, 0)) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const REAL_KEY_LIMITS = { keyPerMinute: 60, keyBurst: 20, keyPerDay: 5000 };

t.test('rate limits through the gateway', async (t) => {
  t.test('per key: 21 at once from rest, then one per second; 429 with Retry-After and violated_policies', async () => {
    const time = clock();
    const gw = await buildTestGateway({ stores: createMemoryStores({ now: time.now }), config: { rateLimits: REAL_KEY_LIMITS } });
    try {
      const get = () => gw.app.inject({ method: 'GET', url: '/v1/webhooks', headers: bearer(gw.keys['acme:all']) });
      for (let i = 0; i < 21; i++) {
        const response = await get();
        assert.equal(response.statusCode, 200, `request ${i + 1}`);
        assert.equal(response.headers['x-ratelimit-remaining'], String(20 - i));
        // Limit is what a key at rest may send at once (burst 20 + 1): Remaining counts down from it.
        assert.equal(response.headers['x-ratelimit-limit'], '21');
      }
      const refused = await get();
      assert.equal(refused.statusCode, 429);
      assert.equal(refused.json().reason, 'rate_limited');
      assert.deepEqual(refused.json().violated_policies, ['key_minute']);
      assert.equal(refused.headers['retry-after'], '1');
      assert.equal(refused.headers['x-ratelimit-remaining'], '0');
      // The policy states the documented rule (60 per 60 s plus a burst of 20), the state what is left.
      assert.match(String(refused.headers['ratelimit-policy']), /^"key_minute";q=60;w=60;rg-burst=20, "key_day";q=5000;w=86400/);
      assert.match(String(refused.headers['ratelimit']), /^"key_minute";r=0;t=21, /);
      time.advance(1000);
      assert.equal((await get()).statusCode, 200, 'one more after a second');
      assert.equal((await get()).statusCode, 429);
    } finally {
      await gw.close();
    }
  });

  t.test('never more than rate + burst in any 60 s for a greedy client', async () => {
    const time = clock();
    const gw = await buildTestGateway({ stores: createMemoryStores({ now: time.now }), config: { rateLimits: REAL_KEY_LIMITS } });
    try {
      const accepted: number[] = [];
      for (let tick = 0; tick < 180 * 4; tick++) {
        const response = await gw.app.inject({ method: 'GET', url: '/v1/webhooks', headers: bearer(gw.keys['acme:all']) });
        if (response.statusCode === 200) accepted.push(time.now());
        time.advance(250);
      }
      for (const start of accepted) {
        const inWindow = accepted.filter((t) => t >= start && t < start + 60_000).length;
        assert.ok(inWindow <= 80, `${inWindow} in a 60 s window`);
      }
    } finally {
      await gw.close();
    }
  });

  t.test('per account (profile A): one budget across all its keys; a 429 consumes nothing', async () => {
    const time = clock();
    const gw = await buildTestGateway({ stores: createMemoryStores({ now: time.now }), config: { rateLimits: { accountPerMinute: 5 } } });
    try {
      const get = (label: string) => gw.app.inject({ method: 'GET', url: '/v1/webhooks', headers: bearer(gw.keys[label]) });
      for (const label of ['acme:all', 'acme:read-only', 'acme:all', 'acme:read:webhooks', 'acme:all']) {
        assert.equal((await get(label)).statusCode, 200);
      }
      const refused = await get('acme:read-only');
      assert.equal(refused.statusCode, 429);
      assert.deepEqual(refused.json().violated_policies, ['account_minute']);
      assert.equal((await get('beta:all')).statusCode, 200, 'another account is unaffected');
      time.advance(60_000);
      assert.equal((await get('acme:all')).statusCode, 200, 'the rolling window moved on');
    } finally {
      await gw.close();
    }
  });

  t.test('profile B has no account limit', async () => {
    const gw = await buildTestGateway({ profile: 'B', config: { rateLimits: { accountPerMinute: 2 } } });
    try {
      for (let i = 0; i < 5; i++) {
        const response = await gw.app.inject({ method: 'GET', url: '/v1/webhooks', headers: bearer(gw.keys['acme:all']) });
        assert.equal(response.statusCode, 200);
        assert.doesNotMatch(String(response.headers['ratelimit-policy']), /account_minute/);
      }
    } finally {
      await gw.close();
    }
  });

  t.test('per source IP: counted before authentication, 429 even without a key', async () => {
    const gw = await buildTestGateway({ config: { rateLimits: { ipPerMinute: 3 } } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) statuses.push((await gw.app.inject({ method: 'GET', url: '/v1/me' })).statusCode);
      assert.deepEqual(statuses, [401, 401, 401, 429]);
      const refused = await gw.app.inject({ method: 'GET', url: '/v1/health' });
      assert.equal(refused.statusCode, 429);
      assert.deepEqual(refused.json().violated_policies, ['ip_minute']);
      assert.ok(Number(refused.headers['retry-after']) >= 1);
    } finally {
      await gw.close();
    }
  });

  t.test('authenticated requests count against the source IP too, in the same decision as the key', async () => {
    const gw = await buildTestGateway({ config: { rateLimits: { ipPerMinute: 4 } } });
    try {
      const key = gw.keys['acme:all'] as string;
      const get = (authorization: string) => gw.app.inject({ method: 'GET', url: '/v1/webhooks', headers: { authorization } });
      assert.equal((await get(`Bearer ${key}`)).statusCode, 200, 'first use: looked up, IP counted before');
      assert.equal((await get(`Bearer ${key}`)).statusCode, 200, 'cached: IP counted with the key');
      const wrongSecret = `Bearer ${key.slice(0, 20)}${'B'.repeat(43)}`;
      assert.equal((await get(wrongSecret)).statusCode, 401, 'a failed authentication is counted as well');
      assert.equal((await get(`Bearer ${key}`)).statusCode, 200);
      const refused = await get(`Bearer ${key}`);
      assert.equal(refused.statusCode, 429);
      assert.deepEqual(refused.json().violated_policies, ['ip_minute']);
    } finally {
      await gw.close();
    }
  });

  t.test('a 403 is a request the key made: counted, with the limits\' headers; the source IP\'s 429 comes first', async () => {
    const time = clock();
    const gw = await buildTestGateway({ stores: createMemoryStores({ now: time.now }), config: { rateLimits: { ...REAL_KEY_LIMITS, ipPerMinute: 30 } } });
    try {
      const get = (label: string) => gw.app.inject({ method: 'GET', url: '/v1/webhooks', headers: bearer(gw.keys[label]) });
      // The first use looks the key up (IP counted alone), the second is held (IP and key in one call).
      for (const [i, remaining] of [[1, '20'], [2, '19']] as const) {
        const forbidden = await get('acme:read:products');
        assert.equal(forbidden.statusCode, 403, `request ${i}`);
        assert.equal(forbidden.headers['x-ratelimit-remaining'], remaining, `request ${i}`);
        assert.equal(forbidden.headers['x-ratelimit-limit'], '21');
        assert.match(String(forbidden.headers['ratelimit-policy']), /"key_minute";q=60/);
        assert.equal(forbidden.headers['cache-control'], 'no-store');
      }
      for (let i = 3; i <= 21; i++) assert.equal((await get('acme:read:products')).statusCode, 403);
      const spent = await get('acme:read:products');
      assert.equal(spent.statusCode, 403, 'over its key limit, the scope still answers first');
      assert.equal(spent.headers['x-ratelimit-remaining'], '0');
      assert.equal((await gw.app.inject({ method: 'GET', url: '/v1/products', headers: bearer(gw.keys['acme:read:products']) })).statusCode, 429, 'its 403s spent its burst');
      for (let i = 24; i <= 30; i++) await get('acme:all');
      const ipRefused = await get('acme:read:products');
      assert.equal(ipRefused.statusCode, 429, 'the source IP is limited before the scope is');
      assert.deepEqual(ipRefused.json().violated_policies, ['ip_minute']);
    } finally {
      await gw.close();
    }
  });

  t.test('X-Forwarded-For counts only from a trusted proxy', async () => {
    const untrusted = await buildTestGateway({ config: { rateLimits: { ipPerMinute: 2 } } });
    const trusted = await buildTestGateway({ config: { rateLimits: { ipPerMinute: 2 }, trustedProxies: ['127.0.0.1'] } });
    try {
      const statuses = async (gw: typeof untrusted) => {
        const result: number[] = [];
        for (let i = 0; i < 3; i++) {
          result.push((await gw.app.inject({ method: 'GET', url: '/v1/health', headers: { 'x-forwarded-for': `198.51.100.${i}` } })).statusCode);
        }
        return result;
      };
      assert.deepEqual(await statuses(untrusted), [200, 200, 429], 'spoofed XFF changes nothing');
      assert.deepEqual(await statuses(trusted), [200, 200, 200], 'each client behind the proxy has its own budget');
    } finally {
      await Promise.all([untrusted.close(), trusted.close()]);
    }
  });

  t.test('IPv6 sources are counted per /64: cycling through one\'s own prefix gains nothing', async () => {
    const time = clock();
    const gw = await buildTestGateway({ stores: createMemoryStores({ now: time.now }), config: { rateLimits: { ipPerMinute: 3 } } });
    try {
      const from = async (remoteAddress: string) => (await gw.app.inject({ method: 'GET', url: '/v1/health', remoteAddress })).statusCode;
      assert.equal(await from('2001:db8:1:2::1'), 200);
      assert.equal(await from('2001:db8:1:2::2'), 200);
      assert.equal(await from('2001:db8:1:2:ffff:ffff:ffff:fffe'), 200);
      assert.equal(await from('2001:db8:1:2:abcd::9'), 429, 'another address of the same /64');
      assert.equal(await from('2001:DB8:1:2:0:0:0:3'), 429, 'whatever the spelling');
      assert.equal(await from('2001:db8:1:3::1'), 200, 'the next /64 is another client');
      time.advance(60_000);
      assert.equal(await from('2001:db8:1:2::1'), 200, 'the window moved on');
    } finally {
      await gw.close();
    }
  });

  t.test('an IPv4-mapped IPv6 source counts as its IPv4 address', async () => {
    const gw = await buildTestGateway({ config: { rateLimits: { ipPerMinute: 2 } } });
    try {
      const from = async (remoteAddress: string) => (await gw.app.inject({ method: 'GET', url: '/v1/health', remoteAddress })).statusCode;
      assert.deepEqual([await from('192.0.2.7'), await from('::ffff:192.0.2.7'), await from('::ffff:c000:207')], [200, 200, 429]);
      assert.equal(await from('192.0.2.8'), 200, 'IPv4 sources are still counted one by one');
    } finally {
      await gw.close();
    }
  });

  t.test('the IPv6 prefix is configurable, and applies to clients behind a trusted proxy', async () => {
    const gw = await buildTestGateway({ config: { rateLimits: { ipPerMinute: 2, ipv6PrefixLength: 56 }, trustedProxies: ['127.0.0.1'] } });
    try {
      const from = async (client: string) =>
        (await gw.app.inject({ method: 'GET', url: '/v1/health', headers: { 'x-forwarded-for': client } })).statusCode;
      assert.deepEqual([await from('2001:db8:1:200::1'), await from('2001:db8:1:2ff::1'), await from('2001:db8:1:201::7')], [200, 200, 429]);
      assert.equal(await from('2001:db8:1:300::1'), 200, 'another /56');
    } finally {
      await gw.close();
    }
  });

  t.test('a client address a trusted proxy wrote with its port counts as the address alone', async () => {
    const gw = await buildTestGateway({ config: { rateLimits: { ipPerMinute: 2 }, trustedProxies: ['127.0.0.1'] } });
    try {
      const from = async (client: string) =>
        (await gw.app.inject({ method: 'GET', url: '/v1/health', headers: { 'x-forwarded-for': client } })).statusCode;
      assert.deepEqual([await from('198.51.100.9:50001'), await from('198.51.100.9:50002'), await from('198.51.100.9')], [200, 200, 429]);
      assert.deepEqual([await from('[2001:db8:5::1]:443'), await from('[2001:db8:5::2]'), await from('2001:db8:5::3')], [200, 200, 429], 'IPv6 in brackets, per /64');
    } finally {
      await gw.close();
    }
  });

  t.test('a key can carry its own limits', async () => {
    const time = clock();
    const gw = await buildTestGateway({ stores: createMemoryStores({ now: time.now }), config: { rateLimits: REAL_KEY_LIMITS } });
    try {
      const { key } = await gw.keyService.issue({ accountId: 'acme', name: 'tight', scopes: ['read:webhooks'], rateLimits: { perMinute: 6, burst: 1, perDay: 3 } });
      const get = () => gw.app.inject({ method: 'GET', url: '/v1/webhooks', headers: bearer(key) });
      assert.equal((await get()).headers['x-ratelimit-limit'], '2');
      assert.equal((await get()).statusCode, 200);
      assert.equal((await get()).statusCode, 429);
      time.advance(10_000);
      const third = await get();
      assert.equal(third.statusCode, 200);
      assert.equal(third.headers['x-ratelimit-limit'], '3', 'the daily limit is now closest to exhaustion');
      assert.equal(third.headers['x-ratelimit-remaining'], '0');
      time.advance(10_000);
      const daily = await get();
      assert.equal(daily.statusCode, 429);
      assert.deepEqual(daily.json().violated_policies, ['key_day']);
      assert.ok(Number(daily.headers['retry-after']) > 3600, 'until the next UTC day');
    } finally {
      await gw.close();
    }
  });
});
