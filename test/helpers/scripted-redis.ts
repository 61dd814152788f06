/**
 * A loopback server that speaks RESP and answers each command from a table: a stand-in for a Redis
 * this machine does not have (an older version, Valkey), its replies copied from that server's
 * source or a real one's output. Only what a client sends at connect and the command under test
 * need answers; anything else answers +OK.
 */
import { createServer, type Server, type Socket } from 'node:net';

/** A command's reply as RESP text (`+OK\r\n`, `-ERR …\r\n`), or from the command's arguments. */
export type ScriptedReply = string | ((args: string[]) => string);

export interface ScriptedRedis {
  url: string;
  /** Connections accepted so far. */
  readonly connections: number;
  /** The replies, by lower-case command name; change them at any time. */
  replies: Map<string, ScriptedReply>;
  /** Cuts every connection and goes on listening: the client connects again (a failover, a restart). */
  dropConnections(): void;
  close(): Promise<void>;
}

export const bulk = (text: string): string => `$${Buffer.byteLength(text)}\r\n${text}\r\n`;

export async function startScriptedRedis(replies: Record<string, ScriptedReply>): Promise<ScriptedRedis> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const state = { replies: new Map(Object.entries(replies)) };
  const server: Server = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const parsed = parseCommand(pending);
        if (!parsed) return;
        pending = pending.subarray(parsed.length);
        const [name = '', ...args] = parsed.command;
        const reply = state.replies.get(name.toLowerCase()) ?? (name.toLowerCase() === 'subscribe' ? subscribed : '+OK\r\n');
        socket.write(typeof reply === 'function' ? reply(args) : reply);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `redis://127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    get replies() {
      return state.replies;
    },
    set replies(next) {
      state.replies = next;
    },
    dropConnections: () => {
      for (const socket of sockets) socket.destroy();
    },
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** SUBSCRIBE's confirmation, one per channel. */
function subscribed(channels: string[]): string {
  return channels.map((channel, index) => `*3\r\n${bulk('subscribe')}${bulk(channel)}:${index + 1}\r\n`).join('');
}

/** One command (an array of bulk strings, as clients send) from the front of `buffer`, or undefined until all of it is there. */
function parseCommand(buffer: Buffer): { command: string[]; length: number } | undefined {
  let at = 0;
  const line = (): string | undefined => {
    const end = buffer.indexOf('\r\n', at);
    if (end < 0) return undefined;
    const text = buffer.subarray(at, end).toString();
    at = end + 2;
    return text;
  };
  const head = line();
  if (head === undefined) return undefined;
  if (!head.startsWith('*')) return { command: head.split(' '), length: at };
  const command: string[] = [];
  for (let count = Number(head.slice(1)); count > 0; count -= 1) {
    const size = line();
    if (size === undefined) return undefined;
    const length = Number(size.slice(1));
    if (buffer.length < at + length + 2) return undefined;
    command.push(buffer.subarray(at, at + length).toString());
    at += length + 2;
  }
  return { command, length: at };
}
