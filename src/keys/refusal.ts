/**
 * An operator's request the service layer turns down (an unknown account or key, a duplicate, a
 * key or account in the wrong state). The key CLI prints the message (exit 1); the admin API answers
 * the problem its kind stands for (src/admin/problems.ts). The message names ids, never a secret.
 */
export type RefusalKind =
  /** No such account, key, endpoint or event. */
  | 'unknown'
  /** The account id is taken. */
  | 'exists'
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
  ) {
    super(message);
    this.name = 'Refusal';
  }
}
