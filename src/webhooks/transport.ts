/**
 * Sends one webhook POST without trusting the URL: the host is resolved once, every address is
 * checked against the URL policy, and the connection goes to the checked addresses only (a name that
 * answers differently the next time — DNS rebinding — never gets a second lookup). No redirect is
 * followed, the request is cut off at 15 s (the Standard Webhooks minimum; the host lookup comes
 * before it) and at most 64 KiB of the answer is read.
 */
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { Agent } from '../upstream/undici.js';
import { attemptSignal } from './attempt-signal.js';
import { DEFAULT_WEBHOOK_PORTS, HostLookupTimeoutError, isAllowedPort, isAllowedPrivateTarget, isPublicAddress, type ResolveHost } from './url-policy.js';

export const DELIVERY_TIMEOUT_MS = 15_000;
export const MAX_ANSWER_BYTES = 64 * 1024;
const CONNECT_TIMEOUT_MS = 5_000;

export interface TransportOptions {
  resolve: ResolveHost;
  /** Sandbox only: http, any port and loopback/private addresses are allowed (never link-local or metadata ones). */
  allowPrivateTargets: boolean;
  /** The ports a URL may use, as at registration (443 only when not given): the list may have shrunk since. */
  allowedPorts?: readonly number[];
  timeoutMs?: number;
}

export type SendResult =
  /** The receiver answered (any status; only 2xx counts as delivered); `retryAfter`: its Retry-After header. */
  | { kind: 'answered'; status: number; retryAfter: string | null }
  /** Not sent: the URL or the address it resolves to is refused by the URL policy. */
  | { kind: 'blocked'; reason: string }
  /** No answer came: unresolvable, unreachable, timed out. */
  | { kind: 'failed'; reason: string };

/**
 * A lookup that only ever answers the addresses already checked, all of them (reference S4: "pass
 * the results on unchanged"): the connection tries the next one when one refuses or does not answer
 * (Node's happy eyeballs), as any client would, so a receiver with one of its addresses down is not
 * failed for it.
 */
function pinnedLookup(addresses: readonly string[]): LookupFunction {
  const entries = addresses.map((address) => ({ address, family: isIP(address) }));
  const [first] = entries as [{ address: string; family: number }];
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, entries);
    else callback(null, first.address, first.family);
  }) as unknown as LookupFunction;
}

/** The checked addresses to connect to, or why there are none. */
async function chooseAddresses(url: URL, options: TransportOptions): Promise<{ addresses: readonly string[] } | Exclude<SendResult, { kind: 'answered' }>> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let addresses: readonly string[];
  if (isIP(host) !== 0) {
    addresses = [host];
  } else {
    try {
      addresses = await options.resolve(host);
    } catch (error) {
      return { kind: 'failed', reason: error instanceof HostLookupTimeoutError ? 'host lookup timed out' : 'host could not be resolved' };
    }
  }
  if (addresses.length === 0) return { kind: 'failed', reason: 'host could not be resolved' };
  if (options.allowPrivateTargets) {
    if (!addresses.every(isAllowedPrivateTarget)) return { kind: 'blocked', reason: 'host resolves to a link-local, cloud metadata or other non-local address' };
  } else if (!addresses.every(isPublicAddress)) {
    return { kind: 'blocked', reason: 'host resolves to a non-public address' };
  }
  return { addresses };
}

export async function sendWebhook(
  target: string,
  headers: Record<string, string>,
  body: string,
  options: TransportOptions & { signal?: AbortSignal },
): Promise<SendResult> {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return { kind: 'blocked', reason: 'URL is not valid' };
  }
  const schemes = options.allowPrivateTargets ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol) || url.username !== '' || url.password !== '') {
    return { kind: 'blocked', reason: 'URL is not allowed' };
  }
  if (!options.allowPrivateTargets && !isAllowedPort(url, options.allowedPorts ?? DEFAULT_WEBHOOK_PORTS)) {
    return { kind: 'blocked', reason: 'URL port is not allowed' };
  }
  const chosen = await chooseAddresses(url, options);
  if ('kind' in chosen) return chosen;

  const attempt = attemptSignal(options.timeoutMs ?? DELIVERY_TIMEOUT_MS, options.signal);
  // One agent per attempt: its only lookup is the pinned addresses, and nothing is pooled across endpoints.
  // TLS still verifies the certificate against the URL's host name (the servername undici sends).
  const agent = new Agent({ connect: { lookup: pinnedLookup(chosen.addresses), timeout: CONNECT_TIMEOUT_MS }, pipelining: 0 });
  try {
    const answer = await agent.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'reseller-gateway-webhooks/1', ...headers },
      body,
      signal: attempt.signal,
    });
    // The status is the answer (only 2xx counts): a body cut off after it, or still coming at the
    // deadline, does not turn a receiver's 200 into a failure (sent again, its endpoint counted failing).
    await readCapped(answer.body).catch(() => undefined);
    const retryAfter = answer.headers['retry-after'];
    return { kind: 'answered', status: answer.statusCode, retryAfter: (Array.isArray(retryAfter) ? retryAfter[0] : retryAfter) ?? null };
  } catch (error) {
    return { kind: 'failed', reason: attempt.timedOut ? 'timed out' : describe(error) };
  } finally {
    attempt.done();
    agent.destroy().catch(() => undefined);
  }
}

/** The HTTP-date form of ANSI C's asctime(), which names no zone. */
const ASCTIME = /^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/;

/**
 * A Retry-After value (RFC 9110 §10.2.3) as a delay from `now`: delay-seconds or an HTTP-date (a
 * date past is no delay); null when absent or not understood.
 */
export function parseRetryAfter(value: string | null, now: number): number | null {
  const text = value?.trim() ?? '';
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // IMF-fixdate and RFC 850 dates end in GMT; asctime's ("Sun Nov  6 08:49:37 1994") is GMT too but
  // says nothing, and Date.parse would read it in the machine's zone. Date.parse alone accepts
  // numbers such as "5.5".
  const gmt = text.endsWith('GMT') ? text : ASCTIME.test(text) ? `${text} GMT` : '';
  const at = gmt === '' ? Number.NaN : Date.parse(gmt);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** Reads at most MAX_ANSWER_BYTES of the answer (nobody looks at it) and drops the rest; bounded by the attempt's signal. */
async function readCapped(stream: AsyncIterable<Buffer> & { destroy(): void }): Promise<void> {
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    if (size >= MAX_ANSWER_BYTES) {
      stream.destroy();
      return;
    }
  }
}

function describe(error: unknown): string {
  const code = (error as { code?: string }).code;
  return code ? `connection failed (${code})` : 'connection failed';
}
