/**
 * Admin API tests: tokens minted per scope, a test gateway configured with them, and its ops
 * listener (where the admin API lives) to inject into.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { ADMIN_SCOPES, mintAdminToken } from '../../src/admin/tokens.js';
import { buildOpsApp } from '../../src/ops/server.js';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { StoreUnavailableError } from '../../src/stores/types.js';
import { buildTestGateway, type TestGateway, type TestGatewayOptions } from '../helpers/gateway.js';

/** `all` holds every admin scope; `<scope>` only that one; `other:<scope>` every scope but that one. */
export type AdminTokenSet = Record<string, { token: string; entry: ReturnType<typeof mintAdminToken>['entry'] }>;

export function mintTokenSet(): AdminTokenSet {
  const set: AdminTokenSet = { all: mintAdminToken('panel', [...ADMIN_SCOPES]) };
  for (const scope of ADMIN_SCOPES) {
    const slug = scope.replace(':', '-');
    set[scope] = mintAdminToken(`only-${slug}`, [scope]);
    set[`other:${scope}`] = mintAdminToken(`without-${slug}`, ADMIN_SCOPES.filter((each) => each !== scope));
  }
  return set;
}

export interface AdminGateway extends TestGateway {
  ops: FastifyInstance;
  tokens: AdminTokenSet;
  /** An admin call on this gateway's ops listener, with the named token (or none). */
  admin(method: string, url: string, options?: { token?: string | null; body?: unknown; headers?: Record<string, string> }): Promise<LightMyRequestResponse>;
}

export async function buildAdminGateway(
  options: TestGatewayOptions & { tokens?: AdminTokenSet; admin?: Record<string, unknown> } = {},
): Promise<AdminGateway> {
  const tokens = options.tokens ?? mintTokenSet();
  const gw = await buildTestGateway({
    ...options,
    config: { ...options.config, admin: { tokens: Object.values(tokens).map((each) => each.entry), ...options.admin } },
  });
  const ops = buildOpsApp(gw.app);
  return {
    ...gw,
    ops,
    tokens,
    admin(method, url, { token = 'all', body, headers = {} } = {}) {
      const authorization = token === null ? {} : { authorization: `Bearer ${tokens[token]?.token ?? token}` };
      return ops.inject({
        method: method as 'GET',
        url,
        headers: { ...authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
    },
    async close() {
      await ops.close();
      await gw.close();
    },
  };
}

/**
 * Memory stores on a clock of the test's, whose idempotency store can be made to fail recording a
 * call's answer (`losing`): the call ran, its answer never got stored, as when Redis drops out.
 */
export function storesLosingAnswers() {
  let now = Date.UTC(2026, 10, 22, 12, 0, 0);
  const stores = createMemoryStores({ now: () => now });
  const complete = stores.idempotency.complete.bind(stores.idempotency);
  const control = { losing: false, advance: (ms: number) => void (now += ms) };
  stores.idempotency.complete = async (...args) => {
    if (control.losing) throw new StoreUnavailableError('Redis did not answer within 1000 ms');
    return complete(...args);
  };
  return { stores, control };
}
