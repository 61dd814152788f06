/**
 * How the mapping turns FOSSBilling's refusals into v1 failures. FOSSBilling gives most of them the
 * default code 9999 (an exception without a code, ApiResponseFactory.php), so rules match the
 * message where there is no code; the message itself never reaches a client.
 */
import { BackendError } from '../../src/backend/backend.js';
import { DETAIL } from '../../src/upstream/answers.js';
import { FossbillingError } from './transport.js';

export const notFound = (what: string): BackendError => new BackendError('not_found', `No such ${what}.`);

export function unreadable(operatorMessage: string, outcomeUnknown = false): BackendError {
  return new BackendError('upstream_error', DETAIL.unreadable, { operatorMessage, outcomeUnknown });
}

export interface Rule {
  match: (error: FossbillingError) => boolean;
  error: (cause: FossbillingError) => BackendError;
}
export const byMessage = (pattern: RegExp) => (error: FossbillingError) => pattern.test(error.upstreamMessage);

/**
 * 715: the method's module is not active; 740: the method does not exist (FOSSBilling/Api/
 * Dispatcher.php). Neither says anything of the record asked for (a 404 would tell a client its
 * order is not there): this FOSSBilling is not the version, or not set up as, the mapping needs.
 */
export const MISSING_METHOD_CODES: ReadonlySet<number> = new Set([715, 740]);

const COMMON_RULES: Rule[] = [
  {
    match: (error) => MISSING_METHOD_CODES.has(Number(error.code)),
    error: (cause) =>
      new BackendError('upstream_error', DETAIL.refused, {
        operatorMessage: `${cause.operatorMessage ?? cause.detail}: FOSSBilling lacks a method the gateway uses (check its version, and that the module is active); run doctor`,
      }),
  },
];

export async function classified<T>(work: Promise<T>, rules: readonly Rule[]): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof FossbillingError) {
      const rule = [...rules, ...COMMON_RULES].find(({ match }) => match(error));
      if (rule) throw rule.error(error);
    }
    throw error;
  }
}
