import assert from 'node:assert/strict';
import t from 'tap';
import { Redis } from 'ioredis';
import { KeyService } from '../../src/keys/key-service.js';
import { createRedisStores, RedisConnection } from '../../src/stores/redis/index.js';
import { MOST_COMMANDS_PER_WRITE } from '../../src/stores/redis/write-batches.js';
import { ipGroup, keyGroup } from '../../src/stores/rate-policies.js';
import type { PolicyCheck, Stores } from '../../src/stores/types.js';
import { startRedisServer } from '../helpers/redis.js';
import { readWindowLog, windowLog } from '../helpers/redis-log.js';
import type { RedisServer } from '../helpers/redis.js';
import { realClock, unique, hitIp, hitKey, hitIpAndKey, revokedUnannounced, webhookRecord } from './conformance.js';
import { runRedisConformance } from './redis-conformance.js';

let server: RedisServer;

t.before(async () => {
  server = await startRedisServer();
});

t.teardown(async () => {
  await server.stop();
});

/**
 * Stores under a fresh key prefix and a plain client to read what they wrote (a test of the Redis
 * layout itself); both closed after `body`.
 */
async function withLayout(name: string, body: (layout: { keyPrefix: string; stores: Stores; inspector: Redis }) => Promise<void>): Promise<void> {
  const keyPrefix = `${unique(name)}:`;
  const stores = await createRedisStores({ url: server.url, keyPrefix });
  const inspector = new Redis(server.url);
  try {
    await body({ keyPrefix, stores, inspector });
  } finally {
    inspector.disconnect();
    await stores.close();
  }
}

runRedisConformance(t, 'redis', (keyPrefix, webhookAdmission) => createRedisStores({ url: server.url, keyPrefix, webhookAdmission }));

t.test('redis: specifics', async (t) => {
  t.test('an invalidation published by one instance reaches the others', async () => {
    const keyPrefix = `${unique('shared')}:`;
    const [publisher, receiver] = await Promise.all([
      createRedisStores({ url: server.url, keyPrefix }),
      createRedisStores({ url: server.url, keyPrefix }),
    ]);
    try {
      const seen: Array<string | null> = [];
      receiver.keys.onInvalidation((keyId) => seen.push(keyId));
      await publisher.keys.publishInvalidation('fedcba9876543210');
      const deadline = Date.now() + 2_000;
      while (!seen.includes('fedcba9876543210') && Date.now() < deadline) await realClock.advance(10);
      // (null: the receiver's own subscription being confirmed at start-up.)
      assert.deepEqual(seen.filter((keyId) => keyId !== null), ['fedcba9876543210']);
    } finally {
      await Promise.all([publisher.close(), receiver.close()]);
    }
  });

  t.test('the commands sent in one turn of the event loop reach Redis in a few writes', async () => {
    const client = new Redis(server.url);
    const admin = new Redis(server.url);
    const reads = async (): Promise<number> => Number(/total_reads_processed:(\d+)/.exec(await admin.info('stats'))?.[1]);
    try {
      const connection = new RedisConnection(client, `${unique('batched')}:`, 1_000);
      await connection.run((redis) => redis.ping());
      const before = await reads();
      const replies = await Promise.all(Array.from({ length: 20 }, (_, index) => connection.run((redis) => redis.incr(connection.key(`n${index % 3}`)))));
      const after = await reads();
      assert.equal(replies.length, 20);
      // A read for each write of at most MOST_COMMANDS_PER_WRITE (fewer when Redis reads two at once),
      // one for the second INFO; each command its own write would be ~20.
      assert.ok(after - before <= Math.ceil(20 / MOST_COMMANDS_PER_WRITE) + 1, `${after - before} reads for 20 commands`);
      // A later turn is a write of its own: nothing is held back.
      assert.equal(await connection.run((redis) => redis.get(connection.key('n0'))), '7');
    } finally {
      client.disconnect();
      admin.disconnect();
    }
  });

  t.test('a key stored in another key order and spacing is still the one read: its revocation is written', async () => {
    const prefix = `${unique('replace')}:`;
    const stores = await createRedisStores({ url: server.url, keyPrefix: prefix });
    const admin = new Redis(server.url);
    try {
      const service = new KeyService(stores.keys, 'replace-pepper-0123456789abcdef0123456789ab', { cacheTtlMs: 1 });
      await service.createAccount({ id: 'acct_o', name: 'O', upstreamId: '1' });
      const { record } = await service.issue({ accountId: 'acct_o', name: 'k', scopes: [] });
      // As an operator's script or an older version might have written it.
      const reordered = Object.fromEntries(Object.entries(record).reverse());
      await admin.hset(`${prefix}{keys}:keys`, record.id, JSON.stringify(reordered, null, 1));
      const revoked = await service.revoke(record.id);
      assert.notEqual(revoked.revokedAt, null);
      assert.deepEqual(await stores.keys.getKey(record.id), revoked);
    } finally {
      admin.disconnect();
      await stores.close();
    }
  });

  t.test('a copy read before the invalidation subscription broke is read again: messages sent meanwhile are lost', async () => {
    const stores = await createRedisStores({ url: server.url, keyPrefix: `${unique('resubscribe')}:` });
    const admin = new Redis(server.url);
    try {
      const { service, key } = await revokedUnannounced(stores.keys);

      let unconfirmed = 0;
      stores.keys.onInvalidation((keyId) => {
        if (keyId === null) unconfirmed += 1;
      });
      await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
      const deadline = Date.now() + 5_000;
      // Once when the subscription broke, once when it answered again.
      while (unconfirmed < 2) {
        assert.ok(Date.now() < deadline, `the subscription came back (${unconfirmed} notices)`);
        await realClock.advance(20);
      }
      assert.equal(await service.authenticate(key), 'revoked', 'read again from the store');
    } finally {
      admin.disconnect();
      await stores.close();
    }
  });

  t.test('lays keys out under the prefix, hash-tagged per account or IP', () =>
    withLayout('layout', async ({ keyPrefix, stores, inspector }) => {
      await hitIp(stores.rateLimits, '2001:db8::1', { limit: 5, windowMs: 60_000 });
      await hitKey(stores.rateLimits, {
        accountId: 'acct_1',
        keyId: '00000000000000aa',
        perMinute: { ratePerMinute: 60, burst: 20 },
        perDay: 5_000,
        accountPerMinute: { limit: 120, windowMs: 60_000 },
      });
      await stores.idempotency.begin({
        accountId: 'acct_1',
        key: 'order-1',
        fingerprint: 'f',
        endpoint: 'POST /v1/orders',
        leaseMs: 5_000,
        settleMs: 5_000,
        retentionMs: 60_000,
        staleAfterMs: null,
      });
      await stores.webhooks.set('acct_1', webhookRecord('https://example.com/hook', 's', '2026-03-01T00:00:00Z'), null);
      await stores.keys.putAccount({ id: 'acct_1', name: 'A', upstreamId: '1', createdAt: '2026-03-01T00:00:00Z' });
      await stores.keys.putKey({
        id: '00000000000000aa',
        accountId: 'acct_1',
        name: 'k',
        scopes: [],
        secretHash: 'h',
        createdAt: '2026-03-01T00:00:00Z',
        expiresAt: null,
        revokedAt: null,
        rateLimits: null,
      });
      const keys = (await inspector.keys(`${keyPrefix}*`)).map((key) => key.slice(keyPrefix.length)).sort();
      assert.deepEqual(keys, [
        '{acct:acct_1}:idem:order-1',
        '{acct:acct_1}:key:00000000000000aa:limits',
        '{acct:acct_1}:webhook',
        '{acct:acct_1}:window',
        '{dataset}:marker',
        '{ip:2001%3Adb8%3A%3A1}:window',
        '{ip:2001%3Adb8%3A%3A1}:window:header',
        '{keys}:account-keys:acct_1',
        '{keys}:accounts',
        '{keys}:keys',
        '{keys}:upstream-accounts',
      ]);
    }),
  );

  t.test('an idempotent POST costs the idempotency store three round trips: claim, write-ahead mark, outcome', async () => {
    const stores = await createRedisStores({ url: server.url, keyPrefix: `${unique('idem-trips')}:` });
    const scope = { accountId: 'acct_1', key: unique('order') };
    const begin = () =>
      stores.idempotency.begin({ ...scope, fingerprint: 'f', endpoint: 'POST /v1/orders', leaseMs: 5_000, settleMs: 5_000, retentionMs: 60_000, staleAfterMs: null });
    const post = async () => {
      const claim = await begin();
      assert.equal(claim.kind, 'acquired');
      assert.equal(await stores.idempotency.markSent(scope, claim.token, 5_000), true);
      await stores.idempotency.complete(scope, claim.token, { status: 201, headers: {}, body: '{}' });
    };
    const admin = new Redis(server.url);
    try {
      await post(); // loads the scripts, should the server not know them yet
      scope.key = unique('order');
      const monitor = await admin.monitor();
      try {
        const received: string[] = [];
        monitor.on('monitor', (_time: string, args: string[], source: string) => {
          if (source !== 'lua') received.push(String(args[0]).toLowerCase());
        });
        await post();
        await stores.ping();
        const deadline = Date.now() + 2_000;
        while (!received.includes('ping') && Date.now() < deadline) await realClock.advance(10);
        assert.deepEqual(received, ['evalsha', 'evalsha', 'evalsha', 'ping']);
      } finally {
        monitor.disconnect();
      }
    } finally {
      admin.disconnect();
      await stores.close();
    }
  });

  t.test('with replicaAcks, a claim or write-ahead mark counts only once a replica has it (WAIT)', async () => {
    // Generous on a loaded machine: the wait is bounded by the command timeout, raised to match.
    const replicaAcks = { replicas: 1, timeoutMs: 2_000 };
    const keyPrefix = `${unique('wait')}:`;
    const stores = await createRedisStores({ url: server.url, keyPrefix, replicaAcks, commandTimeoutMs: 3_000 });
    const request = (key: string) => ({
      accountId: 'acct_1', key, fingerprint: 'f', endpoint: 'POST /v1/orders', leaseMs: 5_000, settleMs: 5_000, retentionMs: 60_000, staleAfterMs: null,
    });
    const replica = await startRedisServer();
    const replicaClient = new Redis(replica.url);
    const primary = new Redis(server.url);
    try {
      const alone = request(unique('alone'));
      await assert.rejects(stores.idempotency.begin(alone), /reached 0 of 1 replicas within 2000 ms/, 'no replica acknowledged the claim');
      // The claim stood on the primary: taken back, or the retry of a request told "not executed" would be 409 in progress for a lease.
      const unreplicated = await createRedisStores({ url: server.url, keyPrefix });
      try {
        assert.equal((await unreplicated.idempotency.begin(alone)).kind, 'acquired', 'the refused claim holds nothing');
      } finally {
        await unreplicated.close();
      }

      await primary.config('SET', 'repl-diskless-sync-delay', '0');
      await replicaClient.replicaof('127.0.0.1', String(server.port));
      const deadline = Date.now() + 10_000;
      while (!/slave0:.*state=online/.test(await primary.info('replication')) && Date.now() < deadline) await realClock.advance(20);
      await primary.set(unique('sync'), '1');
      assert.equal(await primary.wait(1, 10_000), 1, 'the replica is in sync');
      const scope = request(unique('replicated'));
      const claim = await stores.idempotency.begin(scope);
      assert.equal(claim.kind, 'acquired');
      assert.equal(await stores.idempotency.markSent(scope, claim.token, 5_000), true);

      // A mark the replica does not acknowledge stands on the primary: taken back, the key is new again.
      const lagging = request(unique('lagging'));
      const held = await stores.idempotency.begin(lagging);
      assert.equal(held.kind, 'acquired');
      replica.pause();
      try {
        await assert.rejects(stores.idempotency.markSent(lagging, held.token, 5_000), /reached 0 of 1 replicas/);
      } finally {
        replica.resume();
      }
      await stores.idempotency.unmarkSent(lagging, held.token);
      await stores.idempotency.release(lagging, held.token);
      const again = await stores.idempotency.begin(lagging);
      assert.equal(again.kind === 'acquired' && again.sentAt, null, 'no write-ahead mark is left');
    } finally {
      primary.disconnect();
      replicaClient.disconnect();
      await replica.stop();
      await stores.close();
    }
  });

  t.test('one decision for the source IP and the key limits is one round trip: one EVALSHA', async () => {
    const stores = await createRedisStores({ url: server.url, keyPrefix: `${unique('round-trip')}:` });
    const hit = () =>
      hitIpAndKey(stores.rateLimits, '192.0.2.2', { limit: 5, windowMs: 60_000 }, {
        accountId: 'acct_1',
        keyId: '00000000000000aa',
        perMinute: { ratePerMinute: 60, burst: 20 },
        perDay: 5_000,
        accountPerMinute: { limit: 120, windowMs: 60_000 },
      });
    const admin = new Redis(server.url);
    try {
      await hit(); // loads the script, should the server not know it yet (NOSCRIPT, then EVAL)
      const monitor = await admin.monitor();
      try {
        // What clients send; the commands a script runs are reported too, from source 'lua'.
        const received: string[] = [];
        monitor.on('monitor', (_time: string, args: string[], source: string) => {
          if (source !== 'lua') received.push(String(args[0]).toLowerCase());
        });
        const decision = await hit();
        assert.equal(decision.allowed, true);
        assert.equal(decision.policies.length, 4);

        // MONITOR reports in the order the server ran the commands: once the PING is in, so is all before it.
        await stores.ping();
        const deadline = Date.now() + 2_000;
        while (!received.includes('ping') && Date.now() < deadline) await realClock.advance(10);
        assert.deepEqual(received, ['evalsha', 'ping']);
      } finally {
        monitor.disconnect();
      }
    } finally {
      admin.disconnect();
      await stores.close();
    }
  });

  t.test('a window log is bounded by its limit, not by traffic: at most limit + limit/8 + 8 entries, gone two windows after its last use', () =>
    withLayout('bounded', async ({ keyPrefix, stores, inspector }) => {
      const policy = { limit: 16, windowMs: 300 };
      const key = `${keyPrefix}{ip:192.0.2.9}:window`;
      let longest = 0;
      let allowed = 0;
      const end = Date.now() + 1_200;
      for (let sent = 1; Date.now() < end; sent += 1) {
        if ((await hitIp(stores.rateLimits, '192.0.2.9', policy)).allowed) allowed += 1;
        if (sent % 5 === 0) longest = Math.max(longest, await inspector.strlen(key));
      }
      assert.ok(allowed > policy.limit, `${allowed} allowed: the window moved on at least once`);
      // A 13-byte header, then 4 bytes an entry.
      assert.ok(longest <= 13 + 4 * (16 + 2 + 8), `the log grew to ${longest} bytes`);
      const ttl = await inspector.pttl(key);
      assert.ok(ttl > 0 && ttl <= 2 * policy.windowMs, `TTL ${ttl} ms`);
    }),
  );

  t.test('counters of the previous layout (a rolling deploy) are read as empty and overwritten, never misread', () =>
    withLayout('previous', async ({ keyPrefix, stores, inspector }) => {
      const doubles = (...values: number[]) => Buffer.concat(values.map((value) => Buffer.from(new Float64Array([value]).buffer).reverse()));
      const now = Date.now();
      // The previous log layout: doubles, [rewritten_at, admit times...], full for a limit of 3.
      await inspector.set(`${keyPrefix}{ip:192.0.2.20}:window`, doubles(now, now - 10, now - 5, now - 1), 'PX', 60_000);
      await inspector.set(`${keyPrefix}{acct:acct_p}:window`, doubles(now, now - 10, now - 5, now - 1), 'PX', 60_000);
      const request = { accountId: 'acct_p', keyId: '00000000000000bb', perMinute: { ratePerMinute: 60, burst: 20 }, perDay: 5_000, accountPerMinute: { limit: 3, windowMs: 60_000 } };
      const first = await hitIpAndKey(stores.rateLimits, '192.0.2.20', { limit: 3, windowMs: 60_000 }, request);
      assert.equal(first.allowed, true);
      assert.deepEqual(
        first.policies.map(({ name, remaining }) => [name, remaining]),
        [['ip_minute', 2], ['key_minute', 20], ['key_day', 4_999], ['account_minute', 2]],
      );
      // Overwritten in the new layout: counted on from there.
      const second = await hitIpAndKey(stores.rateLimits, '192.0.2.20', { limit: 3, windowMs: 60_000 }, request);
      const remaining = (name: string) => second.policies.find((state) => state.name === name)?.remaining;
      assert.equal(remaining('ip_minute'), 1);
      assert.equal(remaining('account_minute'), 1);
      assert.equal((await inspector.getBuffer(`${keyPrefix}{ip:192.0.2.20}:window`))?.length, 13 + 4 * 2);
    }),
  );

  t.test('a log in use for weeks moves its origin: its entries are rewritten as offsets from the window, still exact', () =>
    withLayout('rebase', async ({ keyPrefix, stores, inspector }) => {
      const key = `${keyPrefix}{ip:192.0.2.30}:window`;
      const now = Date.now();
      // An origin 2^31 ms (25 days) back, last rewritten a minute ago; two requests in the window.
      const origin = now - 2 ** 31 - 1_000;
      await inspector.set(key, windowLog(origin, now - 60_000 - origin, [now - 5_000 - origin, now - 3_000 - origin]), 'PX', 60_000);
      const policy = { limit: 3, windowMs: 10_000 };
      assert.equal((await hitIp(stores.rateLimits, '192.0.2.30', policy)).policies[0]?.remaining, 0);
      const stored = (await inspector.getBuffer(key)) as Buffer;
      const { origin: moved, times: admitted } = readWindowLog(stored);
      assert.ok(moved > now - 20_000 && moved <= now, `origin moved to ${moved - now} ms from now`);
      assert.equal(stored.length, 13 + 4 * 3);
      const times = admitted.map((time) => time - now);
      assert.ok(Math.abs((times[0] as number) + 5_000) <= 1 && Math.abs((times[1] as number) + 3_000) <= 1, `entries at ${times.join(', ')} ms`);
      const refused = await hitIp(stores.rateLimits, '192.0.2.30', policy);
      assert.equal(refused.allowed, false);
      // Room again when the oldest, 5 s back, leaves its 10 s window.
      assert.ok(refused.retryAfterMs !== null && refused.retryAfterMs > 4_000 && refused.retryAfterMs <= 5_001, `retry after ${refused.retryAfterMs} ms`);
      // Windows are minutes; one beyond what 32-bit offsets keep is refused before anything is sent.
      await assert.rejects(async () => hitIp(stores.rateLimits, '192.0.2.31', { limit: 3, windowMs: 2 ** 31 }), RangeError);
    }),
  );

  t.test('the script takes a group of one counter (gcra, day or both) and one log; any other group is refused before anything is sent', () =>
    withLayout('shapes', async ({ keyPrefix, stores, inspector }) => {
      const request = { accountId: 'acct_s', keyId: '00000000000000cc', perMinute: { ratePerMinute: 60, burst: 1 }, perDay: 3, accountPerMinute: { limit: 5, windowMs: 60_000 } };
      const [minute, day, account] = keyGroup(request) as [PolicyCheck, PolicyCheck, PolicyCheck];
      const [ip] = ipGroup('192.0.2.40', { limit: 5, windowMs: 60_000 }) as [PolicyCheck];
      const refused: PolicyCheck[][] = [
        [minute, { ...minute, rule: { kind: 'gcra' as const, intervalMs: 500, burst: 3 } }],
        [account, { ...ip, counter: account.counter }],
        [minute, { ...day, counter: `${day.counter}:other` }],
        [minute, { ...account, counter: minute.counter }],
      ];
      for (const group of refused) await assert.rejects(stores.rateLimits.hit([group]), /Redis store takes one of each|keep one counter|holds a log/);
      // The marker the stores record at start (dataset-marker.ts) is not the script's.
      const written = (await inspector.keys(`${keyPrefix}*`)).filter((key) => !key.endsWith('{dataset}:marker'));
      assert.deepEqual(written, [], 'nothing was written');

      // The parts on their own: the day alone, then the minute alone, on the key's one counter.
      const days = [];
      for (let sent = 0; sent < 4; sent += 1) days.push((await stores.rateLimits.hit([[day]])).allowed);
      assert.deepEqual(days, [true, true, true, false]);
      const minutes = [];
      for (let sent = 0; sent < 3; sent += 1) minutes.push((await stores.rateLimits.hit([[minute]])).allowed);
      assert.deepEqual(minutes, [true, true, false]);
      // Both again: the counter kept each part's count (the day's 3 and the minute's burst).
      const both = await stores.rateLimits.hit([[minute, day]]);
      assert.equal(both.allowed, false);
      assert.deepEqual(
        both.policies.map(({ name, remaining }) => [name, remaining]),
        [['key_minute', 0], ['key_day', 0]],
      );
    }),
  );

  t.test('the harness fails loudly, never skips, when redis-server is missing', async () => {
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      await assert.rejects(startRedisServer(), /redis-server not found on PATH/);
    } finally {
      process.env.PATH = path;
    }
  });

  t.test('runs its scripts again after the server forgot them (NOSCRIPT)', async () => {
    const stores = await createRedisStores({ url: server.url, keyPrefix: `${unique('noscript')}:` });
    const admin = new Redis(server.url);
    try {
      const policy = { limit: 5, windowMs: 60_000 };
      assert.equal((await hitIp(stores.rateLimits, '192.0.2.1', policy)).allowed, true);
      await admin.script('FLUSH');
      const after = await hitIp(stores.rateLimits, '192.0.2.1', policy);
      assert.equal(after.policies[0]?.remaining, 3);
    } finally {
      admin.disconnect();
      await stores.close();
    }
  });
});
