import { z } from 'zod';
import { BackendError } from '../../backend/backend.js';
import { defineEndpoint, type Caller, type GatewayDeps } from '../../http/endpoint.js';
import { keyLimits } from '../../limits/rate-limiter.js';
import { type Account, AccountSchema, TimestampSchema } from '../../v1/schemas.js';
import { SCOPES } from '../../keys/scopes.js';
import { DETAIL } from '../../upstream/answers.js';

const MeSchema = z
  .object({
    account: AccountSchema,
    key: z.object({
      id: z.string(),
      name: z.string(),
      scopes: z.array(z.enum(SCOPES)),
      created_at: TimestampSchema,
      expires_at: TimestampSchema.nullable(),
      rate_limits: z.object({
        per_minute: z.number().int(),
        burst: z.number().int(),
        per_day: z.number().int(),
        account_per_minute: z.number().int().nullable(),
      }),
    }),
  })
  .meta({ id: 'Me' });

/**
 * The account under this gateway's account id (a v1 upstream's own id is replaced). Field by field:
 * `{ ...account, id }` would give every answer a hidden class of its own in V8 (node 20: a property
 * added after a spread), and each read of it downstream a slow lookup.
 */
function v1Account(caller: Caller, account: Omit<Account, 'id'>): Account {
  return { id: caller.account.id, name: account.name, company: account.company, email: account.email, status: account.status, currency: account.currency };
}

/** The account as the upstream knows it, under this gateway's account id, and the calling key. */
function meBody(caller: Caller, deps: GatewayDeps, account: Omit<Account, 'id'>) {
  const key = caller.key;
  const limits = keyLimits(key, deps.config);
  return {
    account: v1Account(caller, account),
    key: {
      id: key.id,
      name: key.name,
      scopes: key.scopes,
      created_at: key.createdAt,
      expires_at: key.expiresAt,
      rate_limits: {
        per_minute: limits.perMinute.ratePerMinute,
        burst: limits.perMinute.burst,
        per_day: limits.perDay,
        account_per_minute: limits.accountPerMinute?.limit ?? null,
      },
    },
  };
}

export default defineEndpoint({
  method: 'GET',
  url: '/v1/me',
  operationId: 'getMe',
  summary: 'Own account and key metadata',
  description: 'Any valid key may call it.',
  tag: 'Account',
  scope: 'any',
  responses: { 200: { description: 'The calling account and key.', schema: MeSchema } },
  errors: [],
  // A v1 upstream knows the customer; the key (and its limits) are this gateway's.
  passthrough: {
    answer: (upstream, { caller, deps }) => {
      const { account } = MeSchema.parse(upstream.body);
      // The account the upstream answered for is the one this account's upstream key is configured
      // for: another (keys swapped in upstream.v1.apiKeys, a routing fault upstream) would show this
      // account another's name, email and currency.
      if (account.id !== caller.customer.upstreamId) {
        throw new BackendError('upstream_error', DETAIL.unreadable, {
          operatorMessage: `v1 upstream getMe: answered for account "${account.id}", not "${caller.customer.upstreamId}"; check upstream.v1.apiKeys`,
        });
      }
      return { status: 200, body: meBody(caller, deps, account) };
    },
  },
  async handler({ caller, deps, call }) {
    return { status: 200, body: meBody(caller, deps, await deps.backend.getAccount(caller.customer, call)) };
  },
});
