/**
 * Fault injection at the edge of the upstream gateway: every request fails the asked way before
 * the gateway does anything with it, so the passthrough in front meets a broken v1 service (an
 * HTML error page, a hang, a reset) rather than a clean problem document.
 */
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { SandboxFaultKind, SandboxFaults } from '../../src/backend/registry.js';

const PAGES: Record<'http500' | 'html', { status: number; body: string }> = {
  http500: { status: 500, body: '<!DOCTYPE html><html><head><title>500 Internal Server Error</title></head><body><h1>Internal Server Error</h1></body></html>' },
  html: { status: 200, body: '<!DOCTYPE html><html><head><title>Maintenance</title></head><body><p>The panel is down for an upgrade.</p></body></html>' },
};

export interface EdgeFaults extends SandboxFaults {
  /** Ends the connections held by `hang` (at close, or when the fault is cleared). */
  release(): void;
}

export function installEdgeFaults(app: FastifyInstance): EdgeFaults {
  let current: SandboxFaultKind | undefined;
  const held = new Set<Socket>();
  const release = (): void => {
    for (const socket of held) socket.destroy();
    held.clear();
  };
  app.addHook('onRequest', (request, reply, done) => {
    const kind = current;
    if (kind === undefined) return done();
    reply.hijack();
    const socket = request.raw.socket;
    if (kind === 'reset') socket.destroy();
    else if (kind === 'hang') held.add(socket);
    else {
      const page = PAGES[kind];
      reply.raw.writeHead(page.status, { 'content-type': 'text/html; charset=utf-8', 'content-length': Buffer.byteLength(page.body) });
      reply.raw.end(page.body);
    }
  });
  return {
    inject(kind) {
      current = kind;
    },
    clear() {
      current = undefined;
      release();
    },
    release,
  };
}
