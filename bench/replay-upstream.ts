/**
 * The slow backend's upstream as a real one is to the gateway: on another machine. The WHMCS
 * simulator builds every answer anew (its 20-29-row GetInvoices pages cost it about 0.5 ms of CPU
 * each, 25 % of a core at 500 a second) and records every call it receives; run beside the gateway
 * on the bench's two cores, that work competed with the gateway's and was counted as latency the
 * gateway adds. This server stands in front of the simulator: a read it was told to replay is
 * forwarded once, and from then on answered with the same status, type and bytes, after the same
 * latency, for the gateway and for the direct calls alike. It keeps one answer per distinct call
 * and nothing per request.
 */
import { request as httpRequest, createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { setMaxListeners } from 'node:events';
import { buffer } from 'node:stream/consumers';
import { setTimeout as sleep } from 'node:timers/promises';
import { listen } from '../simulators/shared/listen.js';

/** Parameters that name the caller, not the call: two callers of one call share its answer. */
const CREDENTIALS = new Set(['identifier', 'secret', 'accesskey', 'username', 'password']);

interface Recorded {
  status: number;
  contentType: string;
  body: Buffer;
}

export interface ReplayUpstream {
  readonly url: string;
  /** Calls answered from a recording, and calls forwarded to the simulator. */
  readonly counts: { replayed: number; forwarded: number };
  close(): Promise<void>;
}

/** The call a form names, credentials left out, its parameters in order: the same for every caller. */
function callKey(form: string): string {
  const params = [...new URLSearchParams(form)].filter(([name]) => !CREDENTIALS.has(name.toLowerCase()));
  params.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return new URLSearchParams(params).toString();
}

function forward(origin: URL, request: IncomingMessage, body: Buffer): Promise<Recorded> {
  return new Promise((resolve, reject) => {
    const upstream = httpRequest(
      { host: origin.hostname, port: origin.port, method: request.method, path: request.url, headers: { ...request.headers, host: origin.host } },
      (response) => {
        buffer(response).then((answer) => resolve({ status: response.statusCode ?? 502, contentType: String(response.headers['content-type'] ?? ''), body: answer }), reject);
      },
    );
    upstream.once('error', reject);
    upstream.end(body);
  });
}

function send(response: ServerResponse, answer: Recorded): void {
  response.writeHead(answer.status, { 'content-type': answer.contentType, 'content-length': answer.body.length });
  response.end(answer.body);
}

/**
 * `simulatorUrl` answers at once; this server adds `latencyMs` to every answer. `replays(action)`
 * names the read actions answered from their first answer (each distinct call once forwarded).
 */
export async function startReplayUpstream(options: { simulatorUrl: string; latencyMs: number; replays: (action: string) => boolean }): Promise<ReplayUpstream> {
  const origin = new URL(options.simulatorUrl);
  const recordings = new Map<string, Recorded>();
  const counts = { replayed: 0, forwarded: 0 };
  const shutdown = new AbortController();
  // Every answer waiting out its latency listens for the close: a hundred at once under load.
  setMaxListeners(0, shutdown.signal);

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const body = await buffer(request);
    const form = body.toString();
    const action = new URLSearchParams(form).get('action') ?? '';
    const key = options.replays(action) ? callKey(form) : undefined;
    let answer = key === undefined ? undefined : recordings.get(key);
    if (answer === undefined) {
      counts.forwarded += 1;
      answer = await forward(origin, request, body);
      if (key !== undefined && answer.status === 200) recordings.set(key, answer);
    } else {
      counts.replayed += 1;
    }
    await sleep(options.latencyMs, undefined, { signal: shutdown.signal });
    send(response, answer);
  };

  const server = createServer((request, response) => {
    handle(request, response).catch(() => response.destroy());
  });
  const listening = await listen(server, '127.0.0.1', 0);
  return {
    url: listening.url,
    counts,
    close: async () => {
      shutdown.abort();
      await listening.close();
    },
  };
}
