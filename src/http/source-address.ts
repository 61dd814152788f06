/**
 * A request's source address: the socket's, or the client's from X-Forwarded-For when the proxy
 * is trusted (config `trustedProxies`). Fastify's `request.ip` works it out again at every read
 * (parsing each address of the chain); the limits, the audit and the access log all need it, so
 * it is worked out once per request.
 */
const SOURCE = Symbol('sourceAddress');

interface WithSource {
  readonly ip: string;
  [SOURCE]?: string;
}

export function sourceAddress(request: { readonly ip: string }): string {
  const held = request as WithSource;
  return (held[SOURCE] ??= held.ip);
}
