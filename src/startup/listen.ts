/**
 * Binding the public and the ops listener. An address Node cannot bind (a port another process
 * holds: a second sandbox with only PORT changed meets the first one's ops port) stops the start
 * with exit 1 as before, but says which setting moves that listener instead of printing Node's stack.
 */
import type { FastifyInstance } from 'fastify';

/** A listener could not bind its address; the message names the setting to change. */
export class ListenError extends Error {}

const WHY: Record<string, string> = {
  EADDRINUSE: 'is in use',
  EACCES: 'may not be bound by this user',
  EADDRNOTAVAIL: 'is not an address of this machine',
};

const SETTINGS = {
  public: 'set PORT (port in the config file) or HOST (host)',
  ops: 'set OPS_PORT (ops.port in the config file) or OPS_HOST (ops.host)',
} as const;

export async function listenOn(app: FastifyInstance, listener: keyof typeof SETTINGS, host: string, port: number): Promise<string> {
  try {
    return await app.listen({ host, port });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? '';
    const why = WHY[code];
    if (why === undefined) throw error;
    throw new ListenError(`${host}:${port} ${why} (${code}); it is for the ${listener} listener: ${SETTINGS[listener]}`, { cause: error });
  }
}
