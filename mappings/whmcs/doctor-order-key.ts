/**
 * The two checks that orders depend on. An order whose outcome is unknown (a timeout after AddOrder
 * was sent) can only be found again through the idempotency key AddOrder stored in a product custom
 * field, read back from GetClientsProducts. Without the field, or with service answers that do not
 * show it, the gateway could never prove an order absent: both checks stop orders while they fail.
 */
import type { DoctorCheck } from '../../src/backend/backend.js';
import type { WhmcsAnswer, WhmcsClient } from './client.js';
import type { WhmcsConfig } from './config.js';
import { failureOutcome } from './doctor-probes.js';
import { ProductsAnswer, type RawProduct } from './parse.js';
import { describeIssues } from './parse-fields.js';
import { decodeEntities } from './text.js';

export const FIELD_CHECK = {
  id: 'order-key-field',
  title: 'Every public product has the order-key custom field',
  blocks: ['orders'],
} as const;
export const VISIBLE_CHECK = {
  id: 'order-key-visible',
  title: 'Service answers (GetClientsProducts) show the order-key field',
  blocks: ['orders'],
} as const;

/** Public products whose services are looked at, at most; one service is enough. */
const MAX_PRODUCTS_SAMPLED = 20;

const sameName = (left: string, right: string): boolean => left.trim().toLowerCase() === right.trim().toLowerCase();

interface FieldRef {
  id: string;
  name: string;
}

/** The field that holds the key, by the mapping's rule: the configured id, else the name. */
function isKeyField(config: WhmcsConfig, pid: string, field: FieldRef): boolean {
  const configured = config.orderKeyField.ids[pid];
  return configured !== undefined ? field.id === String(configured) : sameName(field.name, config.orderKeyField.name);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fieldFix(config: WhmcsConfig, pids: readonly string[]): string {
  return (
    `In WHMCS (Products/Services → edit product → Custom Fields) add a Text field named "${config.orderKeyField.name}" ` +
    `to product ${pids.join(', ')} with "Show on Order Form" ticked (GetProducts lists only those), or set ` +
    `upstream.whmcs.orderKeyField.ids.<pid> to the id of the field that should hold the key.`
  );
}

export function fieldCheck(config: WhmcsConfig, catalog: readonly RawProduct[]): DoctorCheck {
  const publicIds = config.publicProductIds;
  if (publicIds.length === 0) {
    return {
      ...FIELD_CHECK,
      status: 'fail',
      detail: 'No public products are configured: nothing can be listed or ordered.',
      fix: 'Set upstream.whmcs.publicProductIds to the WHMCS product ids resellers may order.',
    };
  }
  const byId = new Map(catalog.map((product) => [product.pid, product]));
  const missing = publicIds.filter((pid) => !byId.has(pid));
  const withoutField = publicIds.filter((pid) => {
    const product = byId.get(pid);
    if (!product || config.orderKeyField.ids[pid] !== undefined) return false;
    return !product.customfields.some((field) => isKeyField(config, pid, field));
  });
  if (missing.length === 0 && withoutField.length === 0) {
    return { ...FIELD_CHECK, status: 'pass', detail: `All ${publicIds.length} public products carry "${config.orderKeyField.name}".` };
  }
  const problems = [
    ...(missing.length > 0 ? [`WHMCS has no product ${missing.join(', ')} (listed in publicProductIds).`] : []),
    ...(withoutField.length > 0 ? [`Product ${withoutField.join(', ')} has no custom field "${config.orderKeyField.name}".`] : []),
  ];
  const fixes = [
    ...(missing.length > 0 ? [`Remove ${missing.join(', ')} from upstream.whmcs.publicProductIds, or create the product.`] : []),
    ...(withoutField.length > 0 ? [fieldFix(config, withoutField)] : []),
  ];
  return { ...FIELD_CHECK, status: 'fail', detail: problems.join(' '), fix: fixes.join(' ') };
}

/** The first service row of a GetClientsProducts answer. */
function firstService(answer: WhmcsAnswer): Record<string, unknown> | undefined {
  const products = answer.products;
  if (!isRecord(products) || !Array.isArray(products.product)) return undefined;
  const [first] = products.product as unknown[];
  return isRecord(first) ? first : undefined;
}

/** The custom fields a service row shows; undefined when the answer carries none at all. */
function shownFields(service: Record<string, unknown>): FieldRef[] | undefined {
  const fields = service.customfields;
  if (fields === '' || (Array.isArray(fields) && fields.length === 0)) return [];
  if (!isRecord(fields) || !Array.isArray(fields.customfield)) return undefined;
  return (fields.customfield as unknown[]).filter(isRecord).map((field) => ({
    id: String(field.id ?? ''),
    name: decodeEntities(String(field.name ?? '')),
  }));
}

const HIDDEN_FIX =
  'Make GetClientsProducts return each service\'s "customfields" (stock WHMCS does; a WHMCS-compatible server, an API ' +
  'hook or a proxy that strips them must stop doing so): without them, an order whose answer was lost could not be ' +
  'found again, and a retry would order twice.';

const failed = (detail: string, fix: string): DoctorCheck => ({ ...VISIBLE_CHECK, status: 'fail', detail, fix });

/**
 * A read that failed proves nothing either way: `skip` keeps what the last run found (a passing
 * check is not failed by a slow WHMCS, a failing one is not passed by it); a role without the
 * action is a failure, since orders need it.
 */
function readFailed<C extends { id: string; title: string }>(check: C, what: string, error: unknown): DoctorCheck {
  const outcome = failureOutcome(error);
  const detail = `${what} failed: ${outcome.message}`;
  if (outcome.kind === 'denied' || outcome.kind === 'unknown_action') {
    return { ...check, status: 'fail', detail, fix: 'Allow it in the gateway credential\'s API role (see api-role).' };
  }
  return { ...check, status: 'skip', detail: `Not checked: ${detail}`, fix: 'Run doctor again once WHMCS answers.' };
}

type ServiceRead = { service: Record<string, unknown> | undefined } | { failure: DoctorCheck };

async function firstServiceAnswer(client: WhmcsClient, params: Record<string, string | number>): Promise<ServiceRead> {
  try {
    return { service: firstService(await client.call('GetClientsProducts', { ...params, limitstart: 0, limitnum: 1 })) };
  } catch (error) {
    return { failure: readFailed(VISIBLE_CHECK, 'GetClientsProducts', error) };
  }
}

function productsWithField(config: WhmcsConfig, catalog: readonly RawProduct[]): Set<string> {
  const has = (product: RawProduct) =>
    config.orderKeyField.ids[product.pid] !== undefined || product.customfields.some((field) => isKeyField(config, product.pid, field));
  return new Set(catalog.filter(has).map((product) => product.pid));
}

/** Looks at one service of a public product (only its custom fields; nothing else is kept). */
export async function visibleCheck(client: WhmcsClient, config: WhmcsConfig, catalog: readonly RawProduct[]): Promise<DoctorCheck> {
  // Products without the field are the field check's failure; their services prove nothing here.
  const withField = productsWithField(config, catalog);
  const sampled = config.publicProductIds.filter((pid) => withField.has(pid)).slice(0, MAX_PRODUCTS_SAMPLED);
  const name = config.orderKeyField.name;
  for (const pid of sampled) {
    const read = await firstServiceAnswer(client, { pid });
    if ('failure' in read) return read.failure;
    if (!read.service) continue;
    const id = String(read.service.id ?? '?');
    const fields = shownFields(read.service);
    if (fields === undefined) return failed(`GetClientsProducts shows no custom fields for service ${id} (product ${pid}).`, HIDDEN_FIX);
    if (!fields.some((field) => isKeyField(config, pid, field))) {
      const configured = config.orderKeyField.ids[pid];
      return failed(
        `Service ${id} (product ${pid}) shows custom fields, but not "${name}"${configured === undefined ? '' : ` (field id ${configured})`}.`,
        `Make upstream.whmcs.orderKeyField (name, or ids.${pid}) name the field of product ${pid} that holds the key.`,
      );
    }
    return { ...VISIBLE_CHECK, status: 'pass', detail: `Service ${id} (product ${pid}) shows "${name}".` };
  }
  return anyServiceCheck(client);
}

/** No public product has a service yet: any service still tells whether answers carry custom fields. */
async function anyServiceCheck(client: WhmcsClient): Promise<DoctorCheck> {
  const read = await firstServiceAnswer(client, {});
  if ('failure' in read) return read.failure;
  if (read.service && shownFields(read.service) === undefined) {
    return failed(`GetClientsProducts shows no custom fields (service ${String(read.service.id ?? '?')}).`, HIDDEN_FIX);
  }
  return {
    ...VISIBLE_CHECK,
    status: 'warn',
    detail: 'No service of a public product exists yet, so no answer could show the field.',
    fix: 'Run doctor again after the first order (the gateway re-runs it every doctor.intervalMs).',
  };
}

/** GetProducts, parsed as the mapping parses it; a failure is the field check's result. */
export async function readCatalog(client: WhmcsClient): Promise<{ catalog: RawProduct[] } | { failure: DoctorCheck }> {
  let answer: WhmcsAnswer;
  try {
    answer = await client.call('GetProducts');
  } catch (error) {
    return { failure: readFailed(FIELD_CHECK, 'GetProducts', error) };
  }
  const parsed = ProductsAnswer.safeParse(answer);
  if (parsed.success) return { catalog: parsed.data };
  const detail = `The GetProducts answer is unreadable: ${describeIssues(parsed.error.issues)}`;
  return { failure: { ...FIELD_CHECK, status: 'fail', detail, fix: 'Check that upstream.whmcs.url points at WHMCS itself.' } };
}
