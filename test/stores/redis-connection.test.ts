/**
 * RedisConnection.run turns every failure to reach Redis into StoreUnavailableError, whether the
 * command rejects or throws before it returns a promise, and leaves a bug's own error alone; its own
 * EVALSHA encoding sends the bytes ioredis would; the commands of one turn leave in a few writes.
 */
import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { Command, Redis } from 'ioredis';
import t from 'tap';
import { encodeEvalsha, RedisConnection, type RedisClient } from '../../src/stores/redis/connection.js';
import { StoreUnavailableError } from '../../src/stores/types.js';
import { startRedisServer } from '../helpers/redis.js';

// A standalone client stand-in: no socket to cork, no cluster deadline.
const connection = new RedisConnection({} as RedisClient, 'rg:', 1000);

t.test('a command that rejects', async () => {
  await assert.rejects(connection.run(() => Promise.reject(new Error('Connection is closed.'))), StoreUnavailableError);
});

t.test('a command that throws before returning its promise', async () => {
  const pending = connection.run(() => {
    throw new Error('Connection is closed.');
  });
  await assert.rejects(pending, StoreUnavailableError);
});

t.test('a reply error that is not about reaching Redis keeps its own error', async () => {
  const reply = Object.assign(new Error('ERR wrong number of arguments'), { name: 'ReplyError' });
  await assert.rejects(connection.run(() => Promise.reject(reply)), (error) => error === reply);
});

t.test('an EVALSHA encoded here is byte for byte what ioredis encodes', async () => {
  const sha = 'f'.repeat(40);
  const cases: Array<[number, Array<string | Buffer>]> = [
    [2, ['rg:{ip:10.0.0.1}:w', 'rg:{acct:acme}:w', Buffer.from([0, 0x41, 0xff, 0x80, 13, 10]), '>dddd']],
    // Non-ASCII text goes as UTF-8; binary with every byte value as it is; empty arguments too.
    [1, ['rg:{acct:zürich-😀}:w', Buffer.from(Array.from({ length: 256 }, (_, i) => i)), '', Buffer.alloc(0)]],
    [0, []],
  ];
  for (const [keyCount, keysAndArgs] of cases) {
    const ioredis = new Command('evalsha', [sha, keyCount, ...keysAndArgs], { replyEncoding: null });
    // ioredis decides between its string and buffer encodings from the arguments, as it does when sending.
    ioredis.stringifyArguments();
    const expected = Buffer.from(ioredis.toWritable({}) as string | Buffer);
    assert.deepEqual(encodeEvalsha(sha, keyCount, keysAndArgs), expected);
  }
});

t.test('the commands of one turn leave in writes of at most 16, those of the next turn apart', async () => {
  const server = await startRedisServer();
  const client = new Redis(server.url);
  try {
    await client.ping();
    const stream = (client as unknown as { stream: Socket }).stream;
    // What reaches the socket's own write calls: one array of chunks per system call.
    const writes: number[] = [];
    const original = { write: stream._write, writev: stream._writev };
    stream._write = function (chunk, encoding, callback) {
      writes.push(1);
      return original.write.call(this, chunk, encoding, callback);
    };
    stream._writev = function (chunks, callback) {
      writes.push(chunks.length);
      return (original.writev as NonNullable<Socket['_writev']>).call(this, chunks, callback);
    };
    const connection = new RedisConnection(client, 'rg:', 1000);
    const send = (count: number, from: number) => Array.from({ length: count }, (_, index) => connection.run((redis) => redis.echo(String(from + index))));

    const first = await Promise.all(send(40, 0));
    assert.deepEqual(first, Array.from({ length: 40 }, (_, index) => String(index)), 'every reply, in order');
    assert.deepEqual(writes, [16, 16, 8]);

    writes.length = 0;
    const second = send(3, 40);
    await new Promise((resolve) => setImmediate(resolve));
    const third = send(2, 43);
    assert.deepEqual([...(await Promise.all(second)), ...(await Promise.all(third))], ['40', '41', '42', '43', '44']);
    assert.deepEqual(writes, [3, 2]);
  } finally {
    client.disconnect();
    await server.stop();
  }
});
