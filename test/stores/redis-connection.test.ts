/**
 * RedisConnection.run turns every failure to reach Redis into StoreUnavailableError, whether the
 * command rejects or throws before it returns a promise, and leaves a bug's own error alone.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { RedisConnection, type RedisClient } from '../../src/stores/redis/connection.js';
import { StoreUnavailableError } from '../../src/stores/types.js';

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
