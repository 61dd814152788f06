/**
 * A simulator's HTTP server brought up and down: listening on `host` and `port` (0: a free one), and
 * closed with every connection it holds, requests still waiting out a latency included, so that a
 * test or a sandbox never waits on them.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Listening {
  /** `http://host:port`, the host bracketed when it is an IPv6 address. */
  url: string;
  /** The port listened on (the one chosen when asked for 0). */
  port: number;
  close(): Promise<void>;
}

export async function listen(server: Server, host: string, port: number): Promise<Listening> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`,
    port: address.port,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
