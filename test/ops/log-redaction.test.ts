/**
 * Fields named like a secret are redacted wherever a log line carries them, at the top or one level
 * down: the config's own secrets (pepper, encryption key, Redis URL) and each backend's credentials.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import t from 'tap';
import { loggerOptions } from '../../src/logger.js';

t.test('every secret-named field is redacted, at the top and inside an object', async () => {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const options = loggerOptions({ logLevel: 'info' }, stream) as pino.LoggerOptions & { stream: Writable };
  const log = pino(options, options.stream);
  const names = ['password', 'secret', 'identifier', 'accesskey', 'accessKey', 'pepper', 'authorization', 'key', 'token', 'apiToken', 'apiKey', 'apiKeys', 'encryptionKey', 'redisUrl'];
  const fields = Object.fromEntries(names.map((name) => [name, `value-of-${name}-0042`]));
  log.info({ ...fields, upstream: { ...fields }, keep: 'shown-0042' }, 'line');
  const [line] = lines;
  assert.ok(line);
  const parsed = JSON.parse(line);
  assert.equal(parsed.keep, 'shown-0042');
  for (const name of names) {
    assert.equal(parsed[name], '[redacted]', name);
    assert.equal(parsed.upstream[name], '[redacted]', `upstream.${name}`);
  }
  assert.doesNotMatch(line, /value-of-/);
});
