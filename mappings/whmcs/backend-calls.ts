/**
 * What every part of the WHMCS backend shares: calls with their answers parsed, the WHMCS error
 * messages turned into the right kind of failure, the customer's clientid, and the ownership check
 * that every answer goes through (WHMCS answers with all clients' records when a filter is missing).
 */
import type { z } from 'zod';
import { BackendError, type Customer } from '../../src/backend/backend.js';
import { type UpstreamCallContext, withFreshness } from '../../src/upstream/client.js';
import type { Freshness } from '../../src/upstream/policy.js';
import type { ActionId } from './actions.js';
import { type FormParams, UpstreamBusinessError, type WhmcsAnswer, type WhmcsClient } from './client.js';
import { ClientDetailsAnswer, type RawClient } from './parse.js';
import { describeIssues } from './parse-fields.js';

export const IS_ID = /^[1-9][0-9]{0,17}$/;

export interface ErrorRule {
  match: RegExp;
  error: (cause: UpstreamBusinessError) => BackendError;
}

/** Turns the WHMCS error messages a call is known to give into the right kind of failure. */
export async function classified<T>(work: Promise<T>, rules: readonly ErrorRule[]): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof UpstreamBusinessError) {
      const rule = rules.find(({ match }) => match.test(error.upstreamMessage));
      if (rule) throw rule.error(error);
    }
    throw error;
  }
}

export function notFound(what: string): BackendError {
  return new BackendError('not_found', `No such ${what}.`);
}

/** An answer that does not fit the request: an upstream error, explained to the operator only. */
export function unreadableAnswer(operatorMessage: string, outcomeUnknown = false): BackendError {
  return new BackendError('upstream_error', 'The billing system answered with something unreadable.', { operatorMessage, outcomeUnknown });
}

/** The account maps to a clientid that WHMCS does not know. */
export function unknownClient(customer: Customer, cause: UpstreamBusinessError): BackendError {
  return new BackendError('upstream_error', 'The account is not set up correctly.', {
    operatorMessage: `account ${customer.accountId} maps to WHMCS client ${customer.upstreamId}, which WHMCS does not know`,
    cause,
  });
}

/** Why a read failed, for the operator's log. */
export const failure = (error: unknown): string =>
  error instanceof BackendError ? (error.operatorMessage ?? error.detail) : error instanceof Error ? error.message : String(error);

export interface WhmcsCalls {
  readonly client: WhmcsClient;
  /** The answer checked against its schema; a mismatch is an upstream error (outcome unknown for a write). */
  parse<S extends z.ZodType>(id: ActionId, answer: unknown, schema: S): z.output<S>;
  /** As parse, for the answer of a call made with `params`: a mismatch also drops it from the answer cache. */
  parseCalled<S extends z.ZodType>(id: ActionId, params: FormParams, answer: WhmcsAnswer, schema: S): z.output<S>;
  /** A field the schema leaves optional because only some requests read it (see parse.ts): this one does. */
  needed<T>(id: ActionId, field: string, value: T | undefined): T;
  request<S extends z.ZodType>(id: ActionId, params: FormParams, schema: S, freshness?: Freshness): Promise<z.output<S>>;
  /** The customer's clientid; without a valid one, WHMCS would answer with every client's data. */
  clientIdOf(customer: Customer): string;
  /**
   * Rows must belong to the customer even though the call was filtered: never leak another client's.
   * For one record asked for by id (`single` names it), the caller gets what another account's
   * record always is, not found (a 502 would tell the id exists); a listing cannot be trusted at all.
   */
  assertOwned(id: ActionId, customer: Customer, owners: readonly string[], single?: string): void;
  clientDetails(customer: Customer): Promise<RawClient>;
}

/**
 * The calls of one Backend call: each upstream call carries `context` (the request's trace), with
 * what the call itself gives (its freshness); none for the calls the mapping makes on its own (the
 * catalog's refresh is shared by every request).
 */
export function createWhmcsCalls(shared: WhmcsClient, context?: UpstreamCallContext): WhmcsCalls {
  const client: WhmcsClient =
    context === undefined ? shared : { ...shared, call: (id, params, given) => shared.call(id, params, given === undefined ? context : { ...context, ...given }) };
  function parse<S extends z.ZodType>(id: ActionId, answer: unknown, schema: S): z.output<S> {
    const result = schema.safeParse(answer);
    if (result.success) return result.data;
    const action = client.actions[id];
    throw unreadableAnswer(
      `WHMCS ${action.name} answer has an unexpected shape: ${describeIssues(result.error.issues)}`,
      action.safety === 'write',
    );
  }

  function parseCalled<S extends z.ZodType>(id: ActionId, params: FormParams, answer: WhmcsAnswer, schema: S): z.output<S> {
    try {
      return parse(id, answer, schema);
    } catch (error) {
      // Not kept: the next read asks WHMCS again rather than failing on it until the TTL ends.
      client.reject(id, params, answer);
      throw error;
    }
  }

  async function request<S extends z.ZodType>(id: ActionId, params: FormParams, schema: S, freshness?: Freshness): Promise<z.output<S>> {
    return parseCalled(id, params, await client.call(id, params, withFreshness(undefined, freshness)), schema);
  }

  function clientIdOf(customer: Customer): string {
    if (IS_ID.test(customer.upstreamId)) return customer.upstreamId;
    throw new BackendError('upstream_error', 'The account is not set up correctly.', {
      operatorMessage: `account ${customer.accountId} maps to "${customer.upstreamId}", which is not a WHMCS clientid`,
    });
  }

  return {
    client,
    parse,
    parseCalled,
    needed(id, field, value) {
      if (value !== undefined) return value;
      throw unreadableAnswer(`WHMCS ${client.actions[id].name} answer has no ${field}, which this request needs`);
    },
    request,
    clientIdOf,
    assertOwned(id, customer, owners, single) {
      if (owners.every((owner) => owner === customer.upstreamId)) return;
      const operatorMessage = `WHMCS ${client.actions[id].name} returned records of another client than ${customer.upstreamId}; the owner filter was ignored`;
      if (single !== undefined) throw new BackendError('not_found', `No such ${single}.`, { operatorMessage });
      throw unreadableAnswer(operatorMessage);
    },
    clientDetails: async (customer) => {
      const client = await classified(request('GetClientsDetails', { clientid: clientIdOf(customer) }, ClientDetailsAnswer), [
        { match: /client not found/i, error: (cause) => unknownClient(customer, cause) },
      ]);
      // Another client's details (a caching proxy, a routing fault) would show its name, email,
      // credit and currency to this account: never served.
      if (client.id !== customer.upstreamId) throw unreadableAnswer(`WHMCS GetClientsDetails for client ${customer.upstreamId} answered client ${client.id}`);
      return client;
    },
  };
}
