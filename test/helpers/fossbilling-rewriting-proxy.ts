/**
 * A FOSSBilling in front of the simulator whose answers are rewritten per method: what another
 * FOSSBilling version (or state) answers where the simulator answers as 56a0871 does.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { buildBackendGateway, type BackendGateway } from './backend-gateway.js';

/** `module/method` → the `result` of a successful answer, rewritten. */
export type Rewrites = Record<string, (result: any) => unknown>;

export async function gatewayBehindRewrites(rewrites: Rewrites, backendConfig: Record<string, unknown> = {}): Promise<BackendGateway> {
  let target = '';
  const proxy: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const headers = { ...req.headers };
        delete headers.host;
        delete headers['content-length'];
        const upstream = await request(`${target}${req.url ?? '/'}`, { method: req.method as 'POST', headers, body: chunks.length > 0 ? Buffer.concat(chunks) : null });
        let text = await upstream.body.text();
        const method = /\/api\/admin\/([a-z_]+\/[a-z_]+)/.exec(req.url ?? '')?.[1];
        const rewrite = method === undefined ? undefined : rewrites[method];
        if (rewrite) {
          const envelope = JSON.parse(text) as { result: unknown; error: unknown };
          if (envelope.error === null) text = JSON.stringify({ ...envelope, result: rewrite(envelope.result) });
        }
        res.writeHead(upstream.statusCode, { 'content-type': 'application/json' });
        res.end(text);
      })().catch((error: unknown) => {
        res.writeHead(500);
        res.end(String(error));
      });
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  try {
    const gateway = await buildBackendGateway('fossbilling', {
      profile: 'A',
      backendConfig: (sandbox) => {
        target = String(sandbox.url).replace(/\/$/, '');
        return { ...backendConfig, url: `http://127.0.0.1:${port}` };
      },
    });
    return {
      ...gateway,
      async close() {
        await gateway.close();
        await new Promise((resolve) => proxy.close(resolve));
      },
    };
  } catch (error) {
    proxy.close();
    throw error;
  }
}
