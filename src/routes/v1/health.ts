import { z } from 'zod';
import { defineEndpoint, type Services } from '../../http/endpoint.js';
import { ApiError } from '../../errors.js';

/** Checks are cached briefly: a health probe must not become load on the billing panel. */
const CHECK_TTL_MS = 5_000;
type HealthState = 'ok' | 'store' | 'upstream';
/** The last check per app (keyed by its services), so that apps in one process never share it. */
const lastChecks = new WeakMap<Services, { at: number; result: Promise<HealthState> }>();

export default defineEndpoint({
  method: 'GET',
  url: '/v1/health',
  operationId: 'getHealth',
  summary: 'Health check',
  description: 'Answers 200 when the gateway can serve, 503 when a dependency it needs is down. No authentication.',
  tag: 'System',
  scope: 'public',
  responses: { 200: { description: 'The gateway can serve.', schema: z.object({ status: z.literal('ok') }).meta({ id: 'Health' }) } },
  errors: ['store_unavailable', 'upstream_unavailable'],
  async handler({ services }) {
    const now = Date.now();
    let check = lastChecks.get(services);
    if (!check || now - check.at > CHECK_TTL_MS) {
      const result = Promise.all([services.stores.ping(), services.backend.ping()]).then(
        ([store, upstream]): HealthState => (!store ? 'store' : !upstream ? 'upstream' : 'ok'),
      );
      check = { at: now, result };
      lastChecks.set(services, check);
    }
    const state = await check.result;
    if (state === 'store') throw new ApiError('store_unavailable', 'A store the gateway needs is down.', { headers: { 'retry-after': '5' } });
    if (state === 'upstream') throw new ApiError('upstream_unavailable', 'The billing backend is unreachable.', { headers: { 'retry-after': '5' } });
    return { status: 200, body: { status: 'ok' } };
  },
});
