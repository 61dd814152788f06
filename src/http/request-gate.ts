/**
 * What every request meets before its route's pipeline: its request id on the answer, a Host that
 * RFC 9112 §3.2 accepts, a target of at most 8 KiB (414), no expectation but 100-continue (417), a refusal of keys put in the query string (contract §1), and the
 * source-IP limit (contract §4) for every request that no endpoint authenticates (public routes,
 * unknown paths). An authenticating endpoint counts the source IP itself, before any key lookup,
 * and for a key this process holds together with the key's limits, in one store call (register.ts).
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.js';
import { sentKeyId } from '../keys/api-key.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import { enforceIpLimit } from './register.js';
import { sourceAddress } from './source-address.js';
import { expectationRefusal } from './expectations.js';
import { hostRefusal, targetRefusal } from './unreadable-request.js';

/** Query parameters that look like someone put an API key in the URL (contract §1), in any case. */
const KEY_QUERY_PARAMS = new Set(['api_key', 'apikey', 'key', 'access_token', 'token']);

/** A key's name under any spelling, or a key itself under any name or as a name (`?rk_…`). */
function carriesKey(query: URLSearchParams): boolean {
  for (const [name, value] of query) {
    if (KEY_QUERY_PARAMS.has(name.toLowerCase()) || sentKeyId(value) !== undefined || sentKeyId(name) !== undefined) return true;
  }
  return false;
}

export function installRequestGate(app: FastifyInstance, rateLimiter: RateLimiter): void {
  // Callback style: no promise for the requests it only looks at.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    const badHead = hostRefusal(request.raw) ?? targetRefusal(request.raw) ?? expectationRefusal(request.raw);
    if (badHead) {
      done(badHead);
      return;
    }
    const query = request.url.includes('?') ? new URLSearchParams(request.url.slice(request.url.indexOf('?') + 1)) : null;
    if (query && carriesKey(query)) {
      done(new ApiError('invalid_request', 'API keys are accepted only in the Authorization header.'));
      return;
    }
    const scope = request.routeOptions.config?.scope;
    if (scope !== undefined && scope !== 'public') {
      done();
      return;
    }
    enforceIpLimit(rateLimiter, sourceAddress(request)).then(() => done(), done);
  });
}
