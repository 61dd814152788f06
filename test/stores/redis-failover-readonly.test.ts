/**
 * A failover that leaves the gateway connected to the old primary, now a replica (a managed Redis
 * or a virtual IP moved to the new primary, the old one demoted): every write is refused with
 * READONLY. The client must connect again (reaching the new primary), not refuse writes until the
 * gateway restarts.
 */
import assert from 'node:assert/strict';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import t from 'tap';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { startRedisServer, type RedisServer } from '../helpers/redis.js';

/** The address the gateway knows: new connections go to whichever server is primary now. */
class MovableAddress {
  private readonly sockets = new Set<Socket>();
  readonly server: Server;

  constructor(public target: number) {
    this.server = createServer((client) => {
      const upstream = connect(this.target, '127.0.0.1');
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `redis://127.0.0.1:${(this.server.address() as { port: number }).port}`;
  }

  close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

let primary: RedisServer;
let standby: RedisServer;
t.before(async () => {
  [primary, standby] = await Promise.all([startRedisServer(), startRedisServer()]);
});
t.teardown(async () => {
  await Promise.all([primary.stop(), standby.stop()]);
});

t.test('after a failover to another server, writes work again without a restart', async () => {
  const address = new MovableAddress(primary.port);
  const stores = await createRedisStores({ url: await address.listen(), keyPrefix: 'failover:' });
  const demoted = new Redis(primary.url);
  const promoted = new Redis(standby.url);
  const account = { id: 'acct_1', name: 'A', upstreamId: '1', createdAt: '2026-03-01T00:00:00.000Z' };
  try {
    await stores.keys.putAccount(account);
    address.target = standby.port;
    await demoted.replicaof('127.0.0.1', String(standby.port));

    const deadline = Date.now() + 5_000;
    let last: unknown;
    for (;;) {
      try {
        await stores.keys.putAccount(account);
        break;
      } catch (error) {
        last = error;
      }
      assert.ok(Date.now() < deadline, `writes still refused 5 s after the failover: ${String(last)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(await promoted.hget('failover:{keys}:accounts', 'acct_1'), JSON.stringify(account), 'written to the new primary');
  } finally {
    demoted.disconnect();
    promoted.disconnect();
    await stores.close();
    await address.close();
  }
});
