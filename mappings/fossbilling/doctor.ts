/**
 * `doctor` for FOSSBilling: checks the real upstream before the gateway trusts it, changing
 * nothing. Every method the deployment uses is probed for the staff permission it needs: FOSSBilling
 * checks the permission first (AbstractApi::checkPermissions) and only then looks the record up,
 * so a probe with id 0 answers "not found" when allowed and error 403 when not, and acts on nothing.
 */
import type { DiagnoseScope, DoctorCheck } from '../../src/backend/backend.js';
import { BackendError } from '../../src/backend/backend.js';
import { connectionFix } from '../../src/upstream/answers.js';
import type { FossbillingConfig } from './config.js';
import { activationCheck } from './doctor-activation.js';
import { MISSING_METHOD_CODES } from './errors.js';
import type { FossbillingMethod } from './methods.js';
import { FOSSBILLING_SERVICE_ACTIONS } from './service-actions.js';
import { createFossbillingTransport, FossbillingError, FossbillingRefusal, type TransportOptions } from './transport.js';

const PROBE_TIMEOUT_MS = 15_000;

/** Parameters that make each method check its permission and then find nothing. */
const PROBES: Readonly<Record<FossbillingMethod, Record<string, unknown>>> = {
  'product/get_types': {},
  'product/get_list': { page: 1, per_page: 1 },
  'client/get': { id: 0 },
  'order/get': { id: 0 },
  'order/get_list': { page: 1, per_page: 1 },
  'order/service': { id: 0 },
  'invoice/get': { id: 0 },
  'invoice/get_list': { page: 1, per_page: 1 },
  'currency/get_default': {},
  'order/create': { client_id: 0, product_id: 0 },
  'order/suspend': { id: 0 },
  'order/unsuspend': { id: 0 },
  'order/cancel': { id: 0 },
};

const ACTION_METHODS: Readonly<Record<string, FossbillingMethod>> = {
  suspend: 'order/suspend',
  unsuspend: 'order/unsuspend',
  cancel: 'order/cancel',
};

/** transport.ts words FOSSBilling's rate-limit refusal (error 429) this way. */
const RATE_LIMITED = /: error 429: /;
const RATE_LIMIT_FIX =
  'FOSSBilling\'s rate limiter refused the gateway: by default it allows one IP 1000 API calls an hour, which the gateway ' +
  'outgrows at once. Add the gateway\'s egress IP to rate_limiter.whitelist_ips in FOSSBilling\'s config.php (0.6 and 0.7: ' +
  'api.rate_limit_whitelist, where the limit delays calls instead).';

type Outcome = { kind: 'allowed' } | { kind: 'refused' | 'denied' | 'missing' | 'failed'; message: string };

/** Api/Dispatcher.php: the staff member has no access to the method's module at all (checked before the method's own 403). */
const NO_MODULE_ACCESS = 725;

type Call = (method: FossbillingMethod, params: Record<string, unknown>) => Promise<unknown>;

async function probe(call: Call, method: FossbillingMethod, params = PROBES[method]): Promise<Outcome> {
  try {
    await call(method, params);
    return { kind: 'allowed' };
  } catch (error) {
    return outcomeOf(error);
  }
}

/** What the operator is told of a failure. */
function messageOf(error: unknown): string {
  return error instanceof BackendError ? (error.operatorMessage ?? error.detail) : String(error);
}

/** What a method's failure says of the staff member's access to it. */
function outcomeOf(error: unknown): Outcome {
  // No such method (another version, a module inactive): nothing was checked for the record.
  if (error instanceof FossbillingError && MISSING_METHOD_CODES.has(Number(error.code))) return { kind: 'missing', message: error.operatorMessage ?? error.detail };
  if (error instanceof FossbillingError && Number(error.code) === NO_MODULE_ACCESS) return { kind: 'denied', message: error.operatorMessage ?? error.detail };
  // Refused for the record (not found, missing parameter): the permission check had passed.
  if (error instanceof FossbillingError) return { kind: 'allowed' };
  const message = messageOf(error);
  if (error instanceof FossbillingRefusal) return { kind: error.code === 403 ? 'denied' : 'refused', message };
  return { kind: 'failed', message };
}

/**
 * The catalog's prices are in FOSSBilling's default currency, and the gateway labels them with
 * `defaultCurrency`: a wrong setting quotes every price in the wrong currency, and nothing else
 * would show it. Read-only; a staff member without currency view gets a warning, not a failure.
 */
async function currencyCheck(call: Call, configured: string): Promise<DoctorCheck> {
  const check = { id: 'default-currency', title: "Catalog prices are labelled with FOSSBilling's default currency" };
  let answer: unknown;
  try {
    answer = await call('currency/get_default', {});
  } catch (error) {
    const outcome = outcomeOf(error);
    if (outcome.kind === 'denied') {
      return { ...check, status: 'warn', detail: `Not checked: ${outcome.message}`, fix: `Give the staff member currency view, or make sure FOSSBilling's default currency is ${configured} (upstream.fossbilling.defaultCurrency).` };
    }
    // A FOSSBilling error that is not about access ("Default currency not found"): nothing to compare.
    const message = outcome.kind === 'allowed' ? messageOf(error) : outcome.message;
    return { ...check, status: 'skip', detail: `Not checked: ${message}`, fix: 'Run doctor again once FOSSBilling answers.' };
  }
  const code = typeof answer === 'object' && answer !== null ? (answer as { code?: unknown }).code : undefined;
  if (typeof code !== 'string' || !/^[A-Z]{3}$/.test(code)) {
    return { ...check, status: 'skip', detail: 'Not checked: currency/get_default answered no currency code.' };
  }
  if (code === configured) return { ...check, status: 'pass', detail: `FOSSBilling's default currency is ${code}, as configured.` };
  return {
    ...check,
    status: 'fail',
    detail: `FOSSBilling's default currency is ${code}, but the gateway labels every catalog price ${configured}.`,
    fix: `Set upstream.fossbilling.defaultCurrency to "${code}".`,
  };
}

export async function diagnoseFossbilling(config: FossbillingConfig, scope: DiagnoseScope, options: TransportOptions = {}): Promise<DoctorCheck[]> {
  const timeouts = Object.fromEntries(Object.entries(config.methodTimeoutsMs).map(([name, ms]) => [name, Math.min(ms, PROBE_TIMEOUT_MS)]));
  // A client of its own: no cache or circuit breaker shared with live traffic.
  const transport = createFossbillingTransport(
    { ...config, timeoutMs: Math.min(config.timeoutMs, PROBE_TIMEOUT_MS), methodTimeoutsMs: timeouts, circuitBreaker: { ...config.circuitBreaker, enabled: false } },
    options,
  );
  try {
    const checks: DoctorCheck[] = [];
    const credentials = await probe(transport.call, 'product/get_types');
    const credentialsCheck = { id: 'credentials', title: 'FOSSBilling accepts the gateway\'s API token' };
    if (credentials.kind === 'allowed' || credentials.kind === 'denied') {
      checks.push({ ...credentialsCheck, status: 'pass', detail: `FOSSBilling at ${new URL(config.url).origin} accepted the token.` });
    } else {
      checks.push({
        ...credentialsCheck,
        status: 'fail',
        detail: credentials.message,
        fix:
          (credentials.kind === 'failed' && RATE_LIMITED.test(credentials.message) ? RATE_LIMIT_FIX : undefined) ??
          (credentials.kind === 'failed' ? connectionFix(credentials.message, 'upstream.fossbilling.url (FOSSBILLING_URL)') : undefined) ??
          `Set FOSSBILLING_API_TOKEN to the API token of an active staff member, allow the gateway's IP in FOSSBilling's api.allowed_ips, and check FOSSBILLING_URL (${config.url}).`,
      });
    }
    const supported: readonly string[] = FOSSBILLING_SERVICE_ACTIONS;
    const used: FossbillingMethod[] = ['client/get', 'product/get_list', 'order/get', 'order/get_list', 'order/service', 'invoice/get', 'invoice/get_list', 'order/create'];
    for (const action of scope.serviceActions) if (ACTION_METHODS[action]) used.push(ACTION_METHODS[action]);
    const permissionCheck = { id: 'permissions', title: 'The token\'s staff member may call every method the gateway uses' };
    const keyCheck = { id: 'order-key-search', title: 'Orders can be found again by their Idempotency-Key (order meta filter)', blocks: ['orders'] as const };
    if (checks[0]?.status === 'fail') {
      checks.push({ ...permissionCheck, status: 'skip', detail: 'Not checked: the token was refused.' });
      checks.push({ ...keyCheck, status: 'skip', detail: 'Not checked: the token was refused.' });
    } else {
      const outcomes = await Promise.all(used.map(async (method) => [method, await probe(transport.call, method)] as const));
      const denied = outcomes.filter(([, outcome]) => outcome.kind !== 'allowed').map(([method, outcome]) => `${method} (${outcome.kind})`);
      checks.push(
        denied.length === 0
          ? { ...permissionCheck, status: 'pass', detail: `${used.length} methods allowed.` }
          : {
              ...permissionCheck,
              status: 'fail',
              detail: `Not allowed: ${denied.join(', ')}.`,
              fix:
                'Give the staff member the view permission of client, product, order and invoice, and manage of order. ' +
                'A method marked missing does not exist in this FOSSBilling: activate its module, or use a version the gateway supports (0.6 or later).',
            },
      );
      checks.push(await currencyCheck(transport.call, config.defaultCurrency));
      checks.push(await activationCheck(transport.call, config));
      const search = await probe(transport.call, 'order/get_list', { page: 1, per_page: 1, meta: { [config.orderKeyMeta]: 'doctor-probe' } });
      checks.push(
        search.kind === 'allowed'
          ? { ...keyCheck, status: 'pass', detail: `order/get_list accepts the meta filter on "${config.orderKeyMeta}".` }
          : search.kind === 'failed' || search.kind === 'refused'
            ? // No usable answer (busy, rate-limited, down) proves nothing: what the last run found stands.
              { ...keyCheck, status: 'skip', detail: `Not checked: ${search.message}`, fix: 'Run doctor again once FOSSBilling answers.' }
            : { ...keyCheck, status: 'fail', detail: search.message, fix: 'Allow order view for the token\'s staff member; without it an order that timed out cannot be found again.' },
      );
    }
    const unsupported = scope.serviceActions.filter((action) => !supported.includes(action));
    checks.push({
      id: 'service-actions',
      title: 'FOSSBilling carries out the profile\'s service actions',
      status: unsupported.length === 0 ? 'pass' : 'warn',
      detail: unsupported.length === 0 ? 'All offered.' : `Not available with FOSSBilling (answered 422): ${unsupported.join(', ')}.`,
      ...(unsupported.length === 0 ? {} : { fix: 'Nothing to fix upstream: FOSSBilling core has no such commands. Tell resellers which actions this deployment offers.' }),
    });
    return checks;
  } finally {
    await transport.close();
  }
}
