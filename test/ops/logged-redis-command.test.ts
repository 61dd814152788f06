/**
 * An ioredis error names the command it failed with, arguments and all (`command.args`): the value
 * of a SET, a script's keys and arguments (an idempotency record's stored answer, a webhook event's
 * body, a key record). Such an error reaches the log as `err` (a non-transient reply in `request
 * failed`, a connection closed under a command in the webhook worker's lines): the command's name
 * and how many arguments it had are logged, never the arguments.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import t from 'tap';
import { loggerOptions } from '../../src/logger.js';
import { startRedisServer } from '../helpers/redis.js';

const SECRET = 'svc-password-Zq8#kP2v';

function capturedLogger(): { log: pino.Logger; lines: string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  const options = loggerOptions({ logLevel: 'info' }, stream) as pino.LoggerOptions & { stream: Writable };
  return { log: pino(options, options.stream), lines };
}

t.test("a Redis reply error's command arguments are not logged; its name and count are", async (t) => {
  const server = await startRedisServer();
  const client = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 0 });
  t.teardown(async () => {
    client.disconnect();
    await server.stop();
  });
  await client.connect();
  const error = await client.call('set', '{acct_1}:idem', SECRET, 'NX', 'NOT-AN-OPTION').then(
    () => assert.fail('the server took a bad option'),
    (failure: unknown) => failure as Error & { command?: { name: string; args: unknown[] } },
  );
  assert.ok(error.command?.args.includes(SECRET), 'ioredis puts the arguments on the error');

  const { log, lines } = capturedLogger();
  log.error({ err: error }, 'request failed');
  const line = JSON.parse(lines.join('')) as { err: { message: string; command: unknown } };
  assert.doesNotMatch(lines.join(''), /Zq8#kP2v/);
  assert.match(line.err.message, /syntax error/);
  assert.deepEqual(line.err.command, { name: 'set', args: '[4 arguments not logged]' });
});

t.test('a command cut by a closed connection (AbortError) logs no argument either', async () => {
  const error = Object.assign(new Error('Command aborted due to connection close'), {
    name: 'AbortError',
    command: { name: 'evalsha', args: ['0123abcd', '1', '{acct_1}:outbox', `{"data":{"password":"${SECRET}"}}`] },
  });
  const { log, lines } = capturedLogger();
  log.warn({ err: error }, 'webhook outbox unavailable; retrying');
  assert.doesNotMatch(lines.join(''), /Zq8#kP2v/);
  assert.match(lines.join(''), /"name":"evalsha"/);
});
