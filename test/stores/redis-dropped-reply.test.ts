/**
 * A connection that drops with a command unanswered: the caller is told the store is unavailable
 * and acts on it (a write-ahead mark it could not confirm is given up, nothing is sent, the answer
 * is 503 "not executed"). That command must not run later behind the caller's back once the client
 * reconnects (ioredis resends unanswered commands by default: `autoResendUnfulfilledCommands`).
 */
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import t from 'tap';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { LuaScript } from '../../src/stores/redis/lua-script.js';
import { StoreUnavailableError } from '../../src/stores/types.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';

/**
 * A TCP relay to Redis that, once armed with a text, drops the connection when a command holding it
 * passes (the command never reaches Redis: a partition, a server killed before reading it), and
 * refuses connections for `blockMs`.
 */
class DroppingRelay {
  private armed: { text: string; blockMs: number } | null = null;
  private blockedUntil = 0;
  private readonly sockets = new Set<Socket>();
  readonly server: Server;

  constructor(private readonly redisPort: number) {
    this.server = createServer((client) => this.relay(client));
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `redis://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  arm(text: string, blockMs: number): void {
    this.armed = { text, blockMs };
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private relay(client: Socket): void {
    if (Date.now() < this.blockedUntil) return void client.destroy();
    const upstream = connect(this.redisPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.on('data', (chunk) => {
      const armed = this.armed;
      if (!armed || !chunk.includes(armed.text)) return void upstream.write(chunk);
      this.armed = null;
      this.blockedUntil = Date.now() + armed.blockMs;
      client.destroy();
      upstream.destroy();
    });
    upstream.on('data', (chunk) => client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }
}

let server: RedisServer;
t.before(async () => {
  server = await startRedisServer();
});
t.teardown(() => server.stop());

t.test('a write-ahead mark cut off with its connection, given up by the caller, is not sent again on reconnect', async () => {
  const relay = new DroppingRelay(server.port);
  const stores = await createRedisStores({ url: await relay.listen(), keyPrefix: 'dropped:' });
  const inspector = new Redis(server.url);
  try {
    const scope = { accountId: 'acct_1', key: 'order-1' };
    const request = { ...scope, fingerprint: 'f', endpoint: 'POST /v1/orders', leaseMs: 300, settleMs: 60_000, retentionMs: 60_000, staleAfterMs: null };
    // Redis knows the script (an EVALSHA that met NOSCRIPT did nothing).
    await stores.idempotency.markSent({ ...scope, key: 'warm-up' }, 'none', 300);
    const claim = await stores.idempotency.begin(request);
    assert.equal(claim.kind, 'acquired');
    const token = claim.kind === 'acquired' ? claim.token : '';

    // The mark is cut off with its connection; Redis is unreachable for longer than the command timeout.
    relay.arm(LuaScript.load('idempotency-mark-sent').sha, 1_000);
    await assert.rejects(stores.idempotency.markSent(scope, token, 300), StoreUnavailableError);
    // What src/http/idempotency.ts does then: takes the mark back and releases the claim (both fail
    // while Redis is unreachable), sends nothing and answers 503.
    await stores.idempotency.unmarkSent(scope, token).catch(() => undefined);
    await stores.idempotency.release(scope, token).catch(() => undefined);

    const deadline = Date.now() + 5_000;
    while (!(await stores.ping())) {
      assert.ok(Date.now() < deadline, 'the stores reconnect');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await new Promise((resolve) => setTimeout(resolve, 400)); // past the claim's lease
    assert.equal(await inspector.hget('dropped:{acct:acct_1}:idem:order-1', 'sentAt'), null, 'no write-ahead mark for a write never sent');
    const retry = await stores.idempotency.begin(request);
    assert.deepEqual(retry.kind === 'acquired' ? retry.sentAt : retry, null, 'the retry runs afresh, nothing to reconcile');
  } finally {
    inspector.disconnect();
    await stores.close();
    await relay.close();
  }
});
