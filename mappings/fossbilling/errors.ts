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

/** 740: the API method does not exist (src/library/FOSSBilling/Api/Dispatcher.php). */
const COMMON_RULES: Rule[] = [{ match: (error) => Number(error.code) === 740, error: (cause) => new BackendError('not_found', 'No such record.', { operatorMessage: cause.operatorMessage }) }];

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
