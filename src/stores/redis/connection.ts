/**
 * The one way the Redis stores talk to Redis: key names under a prefix, a deadline on every call,
 * and every failure to reach Redis turned into StoreUnavailableError.
 */
import { Cluster, Command, type Redis } from 'ioredis';
import { StoreUnavailableError } from '../types.js';
import type { LuaScript } from './lua-script.js';
import { WriteBatches } from './write-batches.js';

export type RedisClient = Redis | Cluster;

interface BufferScripting {
  evalshaBuffer(sha: string, keyCount: number, ...keysAndArgs: Array<string | Buffer>): Promise<Buffer>;
  evalBuffer(source: string, keyCount: number, ...keysAndArgs: Array<string | Buffer>): Promise<Buffer>;
}

/**
 * Replies that mean "not now" (failover, loading, busy script, writes refused: maxmemory reached or
 * a failed snapshot) rather than a wrong command. A script refused for memory is refused at its
 * first write, so nothing of it was done.
 */
const TRANSIENT_REPLY = /^(CLUSTERDOWN|LOADING|MASTERDOWN|TRYAGAIN|READONLY|BUSY|NOREPLICAS|OOM|MISCONF)\b/;

/**
 * What Redis 6.x puts before the error a script's redis.call met (scripting.c evalGenericCommand,
 * "Error running script (call to f_<sha>): <where>: <error>"): where the error was raised, and for
 * a write refused before it ran (READONLY, MISCONF, NOREPLICAS, OOM: luaPushError) where it was
 * refused, with the reply's `-`. Redis 7 gives the command's own error first.
 */
const SCRIPT_ERROR_6 = /^ERR Error running script \(call to f_[0-9a-f]{40}\): @user_script:\d+: (?:@user_script: \d+: -)?/;

/** A reply error's message as Redis 7 words it: on Redis 6 a script's redis.call error, unwrapped. */
export function replyMessage(message: string): string {
  const wrapping = SCRIPT_ERROR_6.exec(message);
  return wrapping ? message.slice(wrapping[0].length) : message;
}

/**
 * Commands sent and not yet answered, at most, per connection. A command cut off by its timeout
 * stays in ioredis's queue (a reply may still come and must be matched), so against a Redis that
 * keeps the connection open but answers nothing (frozen, SIGSTOP) every request added to it, and to
 * the socket's buffer, for as long as the freeze lasted. Past this many, a call fails at once.
 * Under load a healthy Redis has a few hundred unanswered.
 */
export const MOST_UNANSWERED_COMMANDS = 10_000;

export class RedisConnection {
  /** A standalone client's own command timeout cuts every call off: no second timer needed. */
  private readonly needsDeadline: boolean;
  /** Standalone: the commands of one turn leave together (see write-batches.ts). */
  private readonly batches: WriteBatches | undefined;

  constructor(
    readonly client: RedisClient,
    readonly keyPrefix: string,
    /** Cuts off what ioredis's own command timeout does not cover, such as a cluster's redirection retries. */
    private readonly deadlineMs: number,
  ) {
    this.needsDeadline = client instanceof Cluster;
    this.batches = this.needsDeadline ? undefined : new WriteBatches(client as Redis);
  }

  key(name: string): string {
    return `${this.keyPrefix}${name}`;
  }

  /** Refused at once: too many commands of this connection are unanswered (see MOST_UNANSWERED_COMMANDS). */
  private overloaded(): StoreUnavailableError | undefined {
    const unanswered = unansweredCommands(this.client);
    if (unanswered < MOST_UNANSWERED_COMMANDS) return undefined;
    return new StoreUnavailableError(`Redis has ${unanswered} commands unanswered`);
  }

  run<T>(command: (client: RedisClient) => Promise<T>): Promise<T> {
    const overloaded = this.overloaded();
    if (overloaded) return Promise.reject(overloaded);
    this.batches?.beforeCommand();
    // The hot path (every rate-limit decision) is one promise, not a chain of async frames.
    if (this.needsDeadline) return this.runWithDeadline(command);
    let pending: Promise<T>;
    try {
      pending = command(this.client);
    } catch (error) {
      return Promise.reject(toStoreError(error));
    }
    return pending.catch(rethrowAsStoreError);
  }

  private async runWithDeadline<T>(command: (client: RedisClient) => Promise<T>): Promise<T> {
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

  /**
   * Runs the script and then `WAIT replicas timeoutMs` in one pipeline (one round trip, on the
   * node that holds the key): the script's reply and how many replicas acknowledged its writes.
   */
  evalScriptAndWait(
    script: LuaScript,
    keys: string[],
    args: Array<string | number>,
    wait: { replicas: number; timeoutMs: number },
  ): Promise<{ reply: unknown; acknowledged: number }> {
    return this.run(async (client) => {
      const run = async (command: 'evalsha' | 'eval'): Promise<[Error | null, unknown][]> => {
        const pipeline = client.pipeline();
        if (command === 'evalsha') pipeline.evalsha(script.sha, keys.length, ...keys, ...args);
        else pipeline.eval(script.source, keys.length, ...keys, ...args);
        pipeline.wait(wait.replicas, wait.timeoutMs);
        return ((await pipeline.exec()) ?? []) as [Error | null, unknown][];
      };
      let results = await run('evalsha');
      if (results[0]?.[0]?.message.startsWith('NOSCRIPT')) results = await run('eval');
      const [[scriptError, reply] = [null, null], [waitError, acknowledged] = [null, 0]] = results;
      if (scriptError) throw scriptError;
      if (waitError) throw waitError;
      return { reply, acknowledged: Number(acknowledged) };
    });
  }

  /**
   * As evalScript, for a script that answers one binary string (the reply as a Buffer); its KEYS
   * and ARGV in one array, the first `keyCount` being KEYS.
   */
  evalScriptBuffer(script: LuaScript, keyCount: number, keysAndArgs: ReadonlyArray<string | Buffer>): Promise<Buffer> {
    // ioredis defines the Buffer variants of its commands but does not declare them.
    const client = this.client as unknown as BufferScripting;
    const withSource = () => client.evalBuffer(script.source, keyCount, ...keysAndArgs);
    if (this.needsDeadline) {
      return this.run(() =>
        client.evalshaBuffer(script.sha, keyCount, ...keysAndArgs).catch((error: unknown) => {
          if (!isNoScript(error)) throw error;
          return withSource();
        }),
      );
    }
    // Standalone, every rate-limit decision: one promise on top of the command's, for its failures.
    const overloaded = this.overloaded();
    if (overloaded) return Promise.reject(overloaded);
    this.batches?.beforeCommand();
    let sent: Promise<Buffer>;
    try {
      sent = (this.client as Redis).sendCommand(new EncodedCommand(encodeEvalsha(script.sha, keyCount, keysAndArgs))) as Promise<Buffer>;
    } catch (error) {
      return Promise.reject(toStoreError(error));
    }
    return sent.then(undefined, (error: unknown) => (isNoScript(error) ? this.run(withSource) : rethrowAsStoreError(error)));
  }

  evalScript(script: LuaScript, keys: string[], args: Array<string | number>): Promise<unknown> {
    return this.run(async (client) => {
      try {
        return await client.evalsha(script.sha, keys.length, ...keys, ...args);
      } catch (error) {
        if (!isNoScript(error)) throw error;
        return client.eval(script.source, keys.length, ...keys, ...args);
      }
    });
  }
}

/** Commands sent and unanswered: the client's, or for a cluster those of its busiest node. */
function unansweredCommands(client: RedisClient): number {
  // A stand-in client (tests) may keep no queue.
  if (!(client instanceof Cluster)) return client.commandQueue?.length ?? 0;
  let most = 0;
  for (const node of client.nodes('all')) most = Math.max(most, node.commandQueue.length);
  return most;
}

/**
 * An EVALSHA sent as bytes encoded here (encodeEvalsha). ioredis encodes each argument into a
 * list of pieces and measures each twice, about 4 µs per command: on the rate-limit decision,
 * which every authenticated request sends, that was a tenth of the gateway's CPU. Standalone
 * only: a cluster client reads the command's keys to route it, and this one has none to show.
 */
class EncodedCommand extends Command {
  constructor(private readonly bytes: Buffer) {
    super('evalsha', [], { replyEncoding: null });
  }

  override toWritable(): Buffer {
    return this.bytes;
  }
}

/** Binary arguments (packed specs) as latin1 text, one byte a character; they are few and reused. */
const binaryAsText = new WeakMap<Buffer, string>();

function latin1Of(arg: string | Buffer): string {
  if (typeof arg !== 'string') {
    let text = binaryAsText.get(arg);
    if (text === undefined) binaryAsText.set(arg, (text = arg.toString('latin1')));
    return text;
  }
  // ASCII stays as it is; anything else goes as its UTF-8 bytes, as ioredis would send it.
  return Buffer.byteLength(arg) === arg.length ? arg : Buffer.from(arg).toString('latin1');
}

/** EVALSHA sha keyCount ...keysAndArgs in RESP, built as one latin1 string and encoded once. */
export function encodeEvalsha(sha: string, keyCount: number, keysAndArgs: ReadonlyArray<string | Buffer>): Buffer {
  const count = String(keyCount);
  let text = `*${keysAndArgs.length + 3}\r\n$7\r\nevalsha\r\n$${sha.length}\r\n${sha}\r\n$${count.length}\r\n${count}\r\n`;
  for (const arg of keysAndArgs) {
    const bytes = latin1Of(arg);
    text += `$${bytes.length}\r\n${bytes}\r\n`;
  }
  return Buffer.from(text, 'latin1');
}

/** The server does not hold the script (after a restart or failover): send its source. */
function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

function rethrowAsStoreError(error: unknown): never {
  throw toStoreError(error);
}

/** A bug (a wrong command, a failing script) keeps its error; anything about reaching Redis becomes unavailability. */
export function toStoreError(error: unknown): Error {
  if (error instanceof StoreUnavailableError) return error;
  const message = error instanceof Error ? error.message : String(error);
  const isReply = error instanceof Error && error.name === 'ReplyError';
  if (isReply && !TRANSIENT_REPLY.test(replyMessage(message))) return error;
  return new StoreUnavailableError(`Redis unavailable: ${message}`, { cause: error });
}
