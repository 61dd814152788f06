/**
 * The one way the Redis stores talk to Redis: key names under a prefix, a deadline on every call,
 * and every failure to reach Redis turned into StoreUnavailableError.
 */
import type { Cluster, Redis } from 'ioredis';
import { StoreUnavailableError } from '../types.js';
import type { LuaScript } from './lua-script.js';

export type RedisClient = Redis | Cluster;

/** Replies that mean "not now" (failover, loading, busy script) rather than a wrong command. */
const TRANSIENT_REPLY = /^(CLUSTERDOWN|LOADING|MASTERDOWN|TRYAGAIN|READONLY|BUSY|NOREPLICAS)\b/;

export class RedisConnection {
  constructor(
    readonly client: RedisClient,
    private readonly keyPrefix: string,
    /** Cuts off what ioredis's own command timeout does not cover, such as a cluster's redirection retries. */
    private readonly deadlineMs: number,
  ) {}

  key(name: string): string {
    return `${this.keyPrefix}${name}`;
  }

  async run<T>(command: (client: RedisClient) => Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new StoreUnavailableError(`Redis did not answer within ${this.deadlineMs} ms`)),
        this.deadlineMs,
      );
    });
    try {
      return await Promise.race([command(this.client), deadline]);
    } catch (error) {
      throw toStoreError(error);
    } finally {
      clearTimeout(timer);
    }
  }

  evalScript(script: LuaScript, keys: string[], args: Array<string | number>): Promise<unknown> {
    return this.run(async (client) => {
      try {
        return await client.evalsha(script.sha, keys.length, ...keys, ...args);
      } catch (error) {
        if (!(error instanceof Error && error.message.startsWith('NOSCRIPT'))) throw error;
        return client.eval(script.source, keys.length, ...keys, ...args);
      }
    });
  }
}

/** A bug (a wrong command, a failing script) keeps its error; anything about reaching Redis becomes unavailability. */
export function toStoreError(error: unknown): Error {
  if (error instanceof StoreUnavailableError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const isReply = error instanceof Error && error.name === 'ReplyError';
  if (isReply && !TRANSIENT_REPLY.test(message)) return error;
  return new StoreUnavailableError(`Redis unavailable: ${message}`, { cause: error });
}
