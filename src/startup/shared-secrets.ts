/**
 * Settings every process sharing one Redis must have alike, checked at boot against the
 * fingerprints the store keeps: with another key pepper every key answers 401 here; with another
 * webhook encryption key every event this process claims fails for good, its secret unopenable,
 * though another instance could have sent it. Either stops the boot (exit 78) instead. A rotated
 * setting's previous value (keys.previousPeppers, webhooks.previousEncryptionKeys) is accepted in
 * the store, and the current one recorded in its place.
 */
import { ConfigError } from '../config.js';
import type { KeyService } from '../keys/key-service.js';
import type { WebhookStore } from '../stores/webhook-types.js';
import type { SecretBox } from '../webhooks/secret-box.js';

export async function checkSharedSecrets(keys: KeyService, webhooks: WebhookStore, box: SecretBox): Promise<void> {
  const issues: string[] = [];
  if (!(await keys.pepperMatchesStore())) {
    issues.push(
      '  - keys.pepper: neither it nor one of keys.previousPeppers is the pepper the keys in the shared Redis are hashed with (another instance set it): every key would answer 401 here. ' +
        "Give every instance the same KEY_PEPPER, or list the one it replaces in KEY_PREVIOUS_PEPPERS (to start over with a new one, every key issued so far stops working: delete the Redis key '{keys}:pepper' under the key prefix).",
    );
  }
  if (webhooks.holdsSealingKey && !(await sealingKeyMatches(keys, webhooks, box))) {
    issues.push(
      '  - webhooks.encryptionKey: neither it nor one of webhooks.previousEncryptionKeys is the key the webhook secrets in the shared Redis are sealed with (another instance recorded it, or the secrets stored do not open with it): every event sent from here would fail. ' +
        "Give every instance the same WEBHOOK_ENCRYPTION_KEY, or list the one it replaces in WEBHOOK_PREVIOUS_ENCRYPTION_KEYS (to start over with a new one, every endpoint's secret must be rotated: delete the Redis key '{webhooks}:sealing-key' under the key prefix).",
    );
  }
  if (issues.length > 0) throw new ConfigError(`invalid configuration:\n${issues.join('\n')}`);
}

/**
 * Whether the store's fingerprint is this key's (or a previous key's, which this one replaces). None recorded yet (the previous release recorded
 * none): the endpoints' secrets already stored tell, and this key is recorded only when one of them
 * opens with it, or when none is stored.
 */
async function sealingKeyMatches(keys: KeyService, webhooks: WebhookStore, box: SecretBox): Promise<boolean> {
  const holds = webhooks.holdsSealingKey?.bind(webhooks);
  if (!holds) return true;
  const held = await holds(box.fingerprint(), false, box.previousFingerprints());
  if (held !== null) return held;
  let sealed = 0;
  for (const account of await keys.listAccounts()) {
    const record = await webhooks.get(account.id);
    if (!record) continue;
    sealed += 1;
    try {
      box.open(record.secret);
    } catch {
      continue;
    }
    return (await holds(box.fingerprint(), true)) !== false;
  }
  return sealed > 0 ? false : (await holds(box.fingerprint(), true)) !== false;
}
