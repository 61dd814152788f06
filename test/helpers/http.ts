import { connect } from 'node:net';
/** A tiny client for end-to-end tests against a gateway listening on a real loopback port. */
import { request } from 'undici';

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
  bytes: Buffer;
  json(): any;
}

export async function call(
  base: string,
  method: string,
  path: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<HttpResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await request(`${base}${path}`, {
    method: method as 'GET',
    headers,
    ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
  });
  const bytes = Buffer.from(await response.body.arrayBuffer());
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) flat[name] = Array.isArray(value) ? value.join(', ') : String(value);
  return {
    status: response.statusCode,
    headers: flat,
    bytes,
    text: bytes.toString('utf8'),
    json: () => JSON.parse(bytes.toString('utf8')),
  };
}

/**
 * One request written to a fresh connection exactly as given (what a client library would not
 * send: an oversized header, a target in absolute form); resolves with everything answered.
 */
export function rawExchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let data = '';
    socket.on('data', (chunk) => (data += String(chunk)));
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
  });
}

/**
 * A request that asks for 100 Continue, on a fresh connection: the head is written, the body only
 * once 100 Continue came; resolves with everything answered until the connection closes.
 */
export function expectingExchange(port: number, head: string, body: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(head));
    let data = '';
    let sent = false;
    socket.on('data', (chunk) => {
      data += String(chunk);
      if (!sent && data.startsWith('HTTP/1.1 100 Continue\r\n\r\n')) {
        sent = true;
        socket.write(body);
      }
    });
    socket.on('end', () => resolve(data));
    socket.on('error', reject);
  });
}
