/**
 * An operator's request the service layer turns down (an unknown account or key, a duplicate, a
 * key or account in the wrong state). The key CLI prints the message (exit 1); the admin API answers
 * the problem its kind stands for (src/admin/problems.ts). The message names ids, never a secret.
 */
import { UpstreamClaimedError } from '../stores/types.js';

export type RefusalKind =
  /** No such account, key, endpoint or event. */
  | 'unknown'
  /** The account id is taken. */
  | 'exists'
  /** The upstream customer is mapped to another account. */
  | 'upstream_taken'
  /** The key is revoked or expired. */
  | 'key_inactive'
  /** The account is disabled. */
  | 'account_disabled'
  /** The webhook endpoint or event is not in a state that allows it. */
  | 'webhook_state';

export class Refusal extends Error {
  constructor(
    readonly kind: RefusalKind,
    message: string,
    /** Problem extension members the admin API adds (the account holding a customer). */
    readonly extensions: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'Refusal';
  }
}

/** An account write the key store refused because another account holds its upstream customer, as a Refusal. */
export async function refusingClaimed<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (error) {
    if (!(error instanceof UpstreamClaimedError)) throw error;
    throw new Refusal('upstream_taken', `upstream customer ${error.upstreamId} is mapped to account ${error.holder} already; one customer, one account`, {
      held_by: error.holder,
    });
  }
}
