/**
 * What every request meets before its route's pipeline: its request id on the answer, a refusal of
 * keys put in the query string (contract §1), and the source-IP limit (contract §4), counted before
 * any key lookup. For a route that authenticates a key this process already holds, the IP limit is
 * instead decided together with the key's limits in one store call (register.ts), the one Redis
 * round trip of the hot path; the request is flagged so that the pipeline does it.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.js';
import { bearerKey } from '../keys/api-key.js';
import type { KeyService } from '../keys/key-service.js';
import type { RateLimiter } from '../limits/rate-limiter.js';
import { enforceIpLimit } from './register.js';

/** Query parameters that look like someone put an API key in the URL (contract §1). */
const KEY_QUERY_PARAMS = ['api_key', 'apikey', 'key', 'access_token', 'token'];

export function installRequestGate(app: FastifyInstance, keys: KeyService, rateLimiter: RateLimiter): void {
  app.decorateRequest('ipLimitDeferred', false);
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    const query = request.url.includes('?') ? new URLSearchParams(request.url.slice(request.url.indexOf('?') + 1)) : null;
    if (query && KEY_QUERY_PARAMS.some((name) => query.has(name))) {
      throw new ApiError('invalid_request', 'API keys are accepted only in the Authorization header.');
    }
    const scope = request.routeOptions.config?.scope;
    const key = bearerKey(request.headers.authorization);
    if (scope !== undefined && scope !== 'public' && key !== undefined && keys.isCached(key)) {
      request.ipLimitDeferred = true;
      return;
    }
    await enforceIpLimit(rateLimiter, request.ip);
  });
}
