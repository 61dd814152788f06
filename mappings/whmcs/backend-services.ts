/**
 * Services on WHMCS: reads (always filtered by the clientid and checked for ownership), their
 * pending cancellation requests, credentials, and the service actions.
 */
import { afterWrite } from '../../src/upstream/answers.js';
import type { Freshness } from '../../src/upstream/policy.js';
import { BackendError, type Customer, type WriteContext } from '../../src/backend/backend.js';
import type { ActionResult, Credentials, PageRequest, PageResult, Service, ServiceAction } from '../../src/v1/schemas.js';
import { classified, type ErrorRule, IS_ID, notFound, unreadableAnswer, type WhmcsCalls } from './backend-calls.js';
import type { WhmcsCatalog } from './backend-catalog.js';
import type { FormParams } from './client.js';
import type { WhmcsConfig } from './config.js';
import { mapCredentials, mapService } from './map.js';
import { CancellationsAnswer, type RawCancellationRequest, type RawService, ServicesAnswer } from './parse.js';
import { cancellationPending, noCancellationPending, planServiceAction, UNUSABLE_ACTION, unsupported } from './service-actions.js';

/** GetCancelledPackages rows per page (the table is never pruned, so it only grows). */
const CANCELLATIONS_PAGE = 1000;
/** Beyond this, reading every request on each service read is too costly (and a hostile total is refused). */
const CANCELLATIONS_MAX_PAGES = 20;

export interface WhmcsServices {
  /** One page of the customer's services as WHMCS has them. */
  servicePage(customer: Customer, params: FormParams, single?: 'service'): Promise<{ services: RawService[]; total: number }>;
  readService(customer: Customer, id: string): Promise<Service>;
  listServices(customer: Customer, page: PageRequest): Promise<PageResult<Service>>;
  getCredentials(customer: Customer, id: string): Promise<Credentials>;
  runServiceAction(customer: Customer, id: string, action: ServiceAction, ctx: WriteContext): Promise<ActionResult>;
}

export function createWhmcsServices(calls: WhmcsCalls, catalog: WhmcsCatalog, config: WhmcsConfig): WhmcsServices {
  const { client, request, needed, clientIdOf, clientDetails } = calls;

  /**
   * Service id → its cancellation request. WHMCS offers no filter, so all pages are read (cached
   * briefly, per process: `uncached` when another worker's cancel or revoke must be seen).
   */
  async function cancellationRequests(freshness?: Freshness): Promise<Map<string, RawCancellationRequest>> {
    const requests = new Map<string, RawCancellationRequest>();
    if (!config.trackCancellations) return requests;
    const page = (limitstart: number) =>
      request('GetCancelledPackages', { limitstart, limitnum: CANCELLATIONS_PAGE }, CancellationsAnswer, freshness);
    const first = await page(0);
    if (first.totalresults > CANCELLATIONS_PAGE * CANCELLATIONS_MAX_PAGES) {
      throw unreadableAnswer(
        `WHMCS lists ${first.totalresults} cancellation requests, more than the ${CANCELLATIONS_PAGE * CANCELLATIONS_MAX_PAGES} the gateway reads; prune tblcancelrequests or set trackCancellations to false`,
      );
    }
    const rest = [];
    for (let start = CANCELLATIONS_PAGE; start < first.totalresults; start += CANCELLATIONS_PAGE) rest.push(page(start));
    for (const answer of [first, ...(await Promise.all(rest))]) {
      for (const row of answer.packages) requests.set(row.relid, row);
    }
    return requests;
  }

  async function servicePage(customer: Customer, params: FormParams, single?: 'service'): Promise<{ services: RawService[]; total: number }> {
    const answer = await request('GetClientsProducts', { clientid: clientIdOf(customer), ...params }, ServicesAnswer);
    calls.assertOwned('GetClientsProducts', customer, answer.products.map((service) => service.clientid), single);
    return { services: answer.products, total: answer.totalresults };
  }

  async function rawService(customer: Customer, id: string): Promise<RawService> {
    if (!IS_ID.test(id)) throw notFound('service');
    const { services } = await servicePage(customer, { serviceid: id, limitstart: 0, limitnum: 1 }, 'service');
    const service = services.find((candidate) => candidate.id === id);
    if (!service) throw notFound('service');
    return service;
  }

  async function readService(customer: Customer, id: string): Promise<Service> {
    const [service, account, cancellations] = await Promise.all([rawService(customer, id), clientDetails(customer), cancellationRequests()]);
    return mapService(service, account.currency_code, cancellations.get(service.id));
  }

  async function listServices(customer: Customer, page: PageRequest) {
    const [{ services, total }, account, cancellations] = await Promise.all([
      // WHMCS returns every row when limitnum is missing: always send it.
      servicePage(customer, { limitstart: (page.page - 1) * page.perPage, limitnum: page.perPage }),
      clientDetails(customer),
      cancellationRequests(),
    ]);
    return { items: services.map((service) => mapService(service, account.currency_code, cancellations.get(service.id))), total };
  }

  async function getCredentials(customer: Customer, id: string) {
    const service = await rawService(customer, id);
    const field = (name: string) => `products.product[].${name}`;
    const username = needed('GetClientsProducts', field('username'), service.username);
    return mapCredentials(service, username, needed('GetClientsProducts', field('password'), service.password));
  }

  const serviceActionErrors = (action: ServiceAction): ErrorRule[] => [
    { match: /service id not found/i, error: () => notFound('service') },
    { match: /not assigned to a module/i, error: () => unsupported(action) },
    { match: /existing cancellation request/i, error: cancellationPending },
    { match: /no cancellation request/i, error: noCancellationPending },
    {
      match: /function not found in module/i,
      error: (cause) =>
        new BackendError('upstream_error', 'The service action failed in the billing system.', {
          operatorMessage: `moduleFunctions allows "${action}" but the WHMCS module has no such function: ${cause.upstreamMessage}`,
          cause,
        }),
    },
    {
      match: UNUSABLE_ACTION,
      error: (cause) =>
        new BackendError('upstream_error', 'The service action failed in the billing system.', {
          operatorMessage: `install the custom WHMCS API action "${config.cancelRevokeAction}" and allow it in the gateway's API role: ${cause.upstreamMessage}`,
          cause,
        }),
    },
  ];

  async function runServiceAction(customer: Customer, id: string, action: ServiceAction, ctx: WriteContext) {
    // Planned on current state: cancellations past this process's cache (another worker may have
    // just filed or revoked one), the catalog within its TTL.
    const [service, account, cancellations, products] = await Promise.all([
      rawService(customer, id),
      clientDetails(customer),
      cancellationRequests('uncached'),
      catalog.all('fresh'),
    ]);
    const current = mapService(service, account.currency_code, cancellations.get(service.id));
    // The module comes from the product, hidden products included.
    const product = products.find((candidate) => candidate.pid === service.pid);
    const module = product ? needed('GetProducts', 'products.product[].module', product.module) : '';
    const plan = planServiceAction(
      action,
      {
        id: service.id,
        status: current.status,
        cancellationPending: current.cancellation_requested,
        module,
        billingCycle: current.billing_cycle,
        nextDueOn: current.next_due_on,
      },
      config,
    );
    await ctx.beforeWrite();
    await classified(client.call(plan.action, plan.params), serviceActionErrors(action));
    const after = await afterWrite(readService(customer, id), `${client.actions[plan.action].name} (service ${id})`);
    const effectiveOn = plan.outcome === 'scheduled' ? (after.cancellation_effective_on ?? current.next_due_on) : null;
    return { action, outcome: plan.outcome, effective_on: effectiveOn, service: after };
  }

  return { servicePage, readService, listServices, getCredentials, runServiceAction };
}
