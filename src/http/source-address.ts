/**
 * A request's source address: the socket's, or the client's from X-Forwarded-For when the proxy
 * is trusted (config `trustedProxies`). Fastify's `request.ip` works it out again at every read
 * (parsing each address of the chain); the limits, the audit and the access log all need it, so
 * it is worked out once per request.
 */
import proxyAddr from '@fastify/proxy-addr';

const SOURCE = Symbol('sourceAddress');

interface WithSource {
  readonly ip: string;
  [SOURCE]?: string;
}

export function sourceAddress(request: { readonly ip: string }): string {
  const held = request as WithSource;
  return (held[SOURCE] ??= held.ip);
}

/** Addresses whose answer is remembered; past it the memory starts again (a flood of new ones). */
const REMEMBERED_ADDRESSES = 10_000;

/**
 * Fastify's `trustProxy` for the configured proxies: the same test Fastify compiles from the list
 * (@fastify/proxy-addr), its answer remembered per address. Compiled, it parses every address of
 * every request's chain (the proxy's and the client's) again; the same few proxies and the clients
 * of the moment come back on every request.
 */
export function trustedProxyTest(proxies: readonly string[]): (address: string, hop: number) => boolean {
  const trusts = proxyAddr.compile([...proxies]);
  const answers = new Map<string, boolean>();
  return (address, hop) => {
    let trusted = answers.get(address);
    if (trusted === undefined) {
      if (answers.size >= REMEMBERED_ADDRESSES) answers.clear();
      answers.set(address, (trusted = trusts(address, hop)));
    }
    return trusted;
  };
}
