import { z } from 'zod';
import { defineLocalEndpoint, type GatewayDeps } from '../../http/endpoint.js';
import { ApiError } from '../../errors.js';
import { boundedPing } from '../../ops/bounded-ping.js';

/**
 * A check's result stands this long from when it started, so a probe never reports a recovery later
 * than this; it also keeps probes from becoming load on the billing panel (one check per second).
 */
const CHECK_TTL_MS = 1_000;
type HealthState = 'ok' | 'store' | 'upstream';
/** The last check per app (keyed by its deps), so that apps in one process never share it. */
const lastChecks = new WeakMap<GatewayDeps, { startedAt: number; result: Promise<HealthState> }>();

/** The current check: the last one while it is younger than CHECK_TTL_MS (finished or not), else a new one. */
function currentCheck(deps: GatewayDeps): Promise<HealthState> {
  const now = Date.now();
  const last = lastChecks.get(deps);
  if (last && now - last.startedAt < CHECK_TTL_MS) return last.result;
  const result = Promise.all([boundedPing(() => deps.stores.ping()), boundedPing(() => deps.upstream.ping())]).then(
    ([store, upstream]): HealthState => (!store ? 'store' : !upstream ? 'upstream' : 'ok'),
  );
  lastChecks.set(deps, { startedAt: now, result });
  return result;
}

export default defineLocalEndpoint({
  method: 'GET',
  url: '/v1/health',
  operationId: 'getHealth',
  summary: 'Health check',
  description: 'Answers 200 when the gateway can serve, 503 when a dependency it needs is down. No authentication.',
  tag: 'System',
  scope: 'public',
  responses: { 200: { description: 'The gateway can serve.', schema: z.object({ status: z.literal('ok') }).meta({ id: 'Health' }) } },
  errors: ['store_unavailable', 'upstream_unavailable'],
  async handler({ deps }) {
    const state = await currentCheck(deps);
    if (state === 'store') throw new ApiError('store_unavailable', 'A store the gateway needs is down.', { headers: { 'retry-after': '5' } });
    if (state === 'upstream') throw new ApiError('upstream_unavailable', 'The billing backend is unreachable.', { headers: { 'retry-after': '5' } });
    return { status: 200, body: { status: 'ok' } };
  },
});
