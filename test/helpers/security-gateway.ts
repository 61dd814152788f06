/**
 * The shared security suite's gateway, one per registered backend (mappings/index.ts): the backend's
 * sandbox behind the real app (backend-gateway.ts), its ops listener with the admin tokens, and
 * what the suite needs to know of the sandbox's data, read through the v1 API itself so that a
 * backend added later needs nothing here: a record of each account per route with an id, a
 * product, and a valid body per route that takes one.
 */
import type { FastifyInstance } from 'fastify';
import t, { type Test } from 'tap';
import type { Endpoint } from '../../src/http/endpoint.js';
import { buildOpsApp } from '../../src/ops/server.js';
import type { UpstreamPlugin } from '../../src/backend/registry.js';
import { mintTokenSet, type AdminTokenSet } from '../admin/helpers.js';
import { buildBackendGateway, type BackendGateway, type BackendGatewayOptions } from './backend-gateway.js';

export type Account = 'acme' | 'beta';

/** An account's records in the sandbox, found through its own lists. */
export interface AccountRecords {
  service: { id: string; order_id: string | null };
  invoiceId: string;
}

/** Which of an account's records each route with an id is called with (products belong to nobody). */
export const RECORD_OF: Record<string, (records: AccountRecords) => string> = {
  '/v1/orders/:id': (records) => records.service.order_id as string,
  '/v1/services/:id': (records) => records.service.id,
  '/v1/services/:id/credentials': (records) => records.service.id,
  '/v1/services/:id/actions': (records) => records.service.id,
  '/v1/billing/invoices/:id/pdf': (records) => records.invoiceId,
};

/** Actions tried for a valid action body, in order of preference: the first the backend carries out. */
const PREFERRED_ACTIONS = ['reboot', 'start', 'stop', 'cancel', 'suspend', 'unsuspend'];

export interface SecurityGateway extends BackendGateway {
  ops: FastifyInstance;
  tokens: AdminTokenSet;
  records: Record<Account, AccountRecords>;
  /** A product every account may see and order. */
  productId: string;
  /** A valid body per v1 route that takes one (`POST /v1/orders`, …), for this backend's data. */
  bodies: Record<string, unknown>;
  /** The path of a route, with the given account's record in place of `:id`. */
  path(endpoint: Pick<Endpoint, 'url'>, owner: Account): string;
  /** Upstream calls the gateway made so far (gateway_upstream_requests_total, every backend counts them). */
  upstreamCalls(): Promise<number>;
}

async function json(app: FastifyInstance, method: 'GET' | 'POST', url: string, key: string | undefined, body?: unknown): Promise<any> {
  const response = await app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json', 'idempotency-key': `security-probe-${Date.now()}` }) },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
  return response.json();
}

export async function buildSecurityGateway(name: string, options: Pick<BackendGatewayOptions, 'backendConfig'> = {}): Promise<SecurityGateway> {
  const tokens = mintTokenSet();
  const gw = await buildBackendGateway(name, { ...options, profile: 'A', config: { admin: { tokens: Object.values(tokens).map((each) => each.entry) } } });
  const ops = buildOpsApp(gw.app);
  try {
    const records = {} as Record<Account, AccountRecords>;
    for (const account of ['acme', 'beta'] as const) {
      const key = gw.keys[`${account}:all`];
      const services = (await json(gw.app, 'GET', '/v1/services?per_page=100', key)).data as Array<AccountRecords['service'] & { status: string; cancellation_requested?: boolean }>;
      const invoices = (await json(gw.app, 'GET', '/v1/billing/invoices?per_page=100', key)).data as Array<{ id: string }>;
      const withOrder = services.filter((candidate) => candidate.order_id !== null);
      const service = withOrder.find((candidate) => candidate.status === 'active' && !candidate.cancellation_requested) ?? withOrder[0];
      if (!service || !invoices[0]) throw new Error(`${account} has no service with an order, or no invoice, in the ${name} sandbox`);
      records[account] = { service: { id: service.id, order_id: service.order_id }, invoiceId: invoices[0].id };
    }
    const acme = gw.keys['acme:all'];
    const currency = (await json(gw.app, 'GET', '/v1/me', acme)).account.currency;
    const products = (await json(gw.app, 'GET', '/v1/products', acme)).data as any[];
    const product = products.find((p) => p.pay_type === 'recurring' && p.config_options.length === 0 && p.prices.some((x: any) => x.currency === currency));
    if (!product) throw new Error(`no recurring product without options in ${currency} in the ${name} sandbox`);
    const cycle = product.prices.find((x: { currency: string }) => x.currency === currency).billing_cycle;
    // The backend's actions in this profile, as the gateway states them when refusing an unknown one.
    const refused = await json(gw.app, 'POST', `/v1/services/${records.acme.service.id}/actions`, acme, { action: 'no_such_action' });
    const action = PREFERRED_ACTIONS.find((each) => (refused.allowed_actions as string[] | undefined)?.includes(each));
    if (!action) throw new Error(`none of ${PREFERRED_ACTIONS.join(', ')} is an action of ${name}: ${JSON.stringify(refused)}`);
    return {
      ...gw,
      ops,
      tokens,
      records,
      productId: product.id,
      bodies: {
        // A host name: FOSSBilling's hosting products take none without one.
        'POST /v1/orders': { product_id: product.id, billing_cycle: cycle, hostname: 'shop.example.com' },
        'POST /v1/services/:id/actions': { action },
        'PUT /v1/webhooks': { url: 'https://hooks.example.com/reseller' },
      },
      path(endpoint, owner) {
        if (!endpoint.url.includes(':id')) return endpoint.url;
        if (endpoint.url === '/v1/products/:id') return endpoint.url.replace(':id', product.id);
        const record = RECORD_OF[endpoint.url];
        if (!record) throw new Error(`no record of an account for ${endpoint.url}: add it to RECORD_OF`);
        return endpoint.url.replace(':id', record(records[owner]));
      },
      async upstreamCalls() {
        const metric = (await gw.app.metrics.registry.getMetricsAsJSON()).find((each) => each.name === 'gateway_upstream_requests_total');
        return (metric?.values ?? []).reduce((sum, sample) => sum + Number(sample.value), 0);
      },
      async close() {
        await ops.close();
        await gw.close();
      },
    };
  } catch (error) {
    await ops.close();
    await gw.close();
    throw error;
  }
}

/**
 * One test per registered backend, each with its security gateway built once for all its subtests;
 * `suite` registers the subtests and reads the gateway when they run.
 */
export function overEveryBackend(
  backends: readonly UpstreamPlugin[],
  what: string,
  suite: (t: Test, gateway: () => SecurityGateway, backend: string) => void,
  /** The backend's config section over its sandbox's, per backend (see BackendGatewayOptions). */
  backendConfig?: (backend: string) => BackendGatewayOptions['backendConfig'],
): void {
  for (const plugin of backends) {
    t.test(`${plugin.name}: ${what}`, async (t) => {
      let gw: SecurityGateway | undefined;
      t.before(async () => {
        gw = await buildSecurityGateway(plugin.name, { backendConfig: backendConfig?.(plugin.name) });
      });
      t.teardown(() => gw?.close());
      suite(t, () => {
        if (!gw) throw new Error('the security gateway is not built yet');
        return gw;
      }, plugin.name);
    });
  }
}
