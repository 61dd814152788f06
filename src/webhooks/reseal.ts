/**
 * After the webhook encryption key is rotated (webhooks.previousEncryptionKeys), every endpoint's
 * secrets are sealed again with the current key, so that the previous one can be removed. The
 * secrets themselves do not change: receivers verify signatures as before.
 */
import type { SealedSecrets, WebhookStore } from '../stores/webhook-types.js';
import type { SecretBox } from './secret-box.js';

export interface ResealReport {
  /** Endpoints whose secrets were sealed with a previous key and now are with the current one. */
  resealed: number;
  /** Endpoints whose secrets were sealed with the current key already. */
  current: number;
  /** Accounts whose endpoint secret opens with none of the keys: it must be set anew (PUT /v1/webhooks). */
  unopenable: string[];
}

/** Another write between the read and the write (a PUT, a rotation): read again, this many times at most. */
const ATTEMPTS = 5;

/** Seals every endpoint's secrets of `accountIds` with the box's current key; those already are stay as they are. */
export async function resealWebhookSecrets(accountIds: readonly string[], store: WebhookStore, box: SecretBox): Promise<ResealReport> {
  const report: ResealReport = { resealed: 0, current: 0, unopenable: [] };
  for (const accountId of accountIds) {
    const outcome = await resealOne(accountId, store, box);
    if (outcome === 'unopenable') report.unopenable.push(accountId);
    else if (outcome !== 'none') report[outcome] += 1;
  }
  return report;
}

async function resealOne(accountId: string, store: WebhookStore, box: SecretBox): Promise<'resealed' | 'current' | 'unopenable' | 'none'> {
  for (let attempt = 1; ; attempt += 1) {
    const record = await store.get(accountId);
    if (!record) return 'none';
    let sealed: SealedSecrets;
    try {
      sealed = { secret: box.reseal(record.secret), previousSecret: resealPrevious(record.previousSecret, box) };
    } catch {
      return 'unopenable';
    }
    if (sealed.secret === record.secret && sealed.previousSecret === record.previousSecret) return 'current';
    if (await store.replaceSealedSecrets(accountId, record, sealed)) return 'resealed';
    if (attempt === ATTEMPTS) throw new Error(`the webhook endpoint of account ${accountId} kept changing while its secrets were sealed again; run again`);
  }
}

/** A previous secret none of the keys opens is left as it is: the worker signs without it (it only ever overlaps for a day). */
function resealPrevious(sealed: string | null, box: SecretBox): string | null {
  if (sealed === null) return null;
  try {
    return box.reseal(sealed);
  } catch {
    return sealed;
  }
}
