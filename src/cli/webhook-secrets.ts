/**
 * `webhook-secrets reseal`: every endpoint's secrets sealed with the current encryption key, once
 * the store's fingerprint accepts this configuration (as a gateway's boot does). Exit 1 when some
 * secret opens with none of the keys.
 */
import type { KeyService } from '../keys/key-service.js';
import { checkSharedSecrets } from '../startup/shared-secrets.js';
import type { WebhookStore } from '../stores/webhook-types.js';
import { resealWebhookSecrets } from '../webhooks/reseal.js';
import type { SecretBox } from '../webhooks/secret-box.js';
import { UsageError, type Output } from './args.js';

export async function resealCommand(sub: string | undefined, keys: KeyService, webhooks: WebhookStore, box: SecretBox): Promise<{ output: Output; code: number }> {
  if (sub !== 'reseal') throw new UsageError('webhook-secrets reseal');
  await checkSharedSecrets(keys, webhooks, box);
  const accounts = (await keys.listAccounts()).map((account) => account.id);
  const report = await resealWebhookSecrets(accounts, webhooks, box);
  const lines = [`webhook secrets sealed again with the current key: ${report.resealed}; sealed with it already: ${report.current}`];
  if (report.unopenable.length > 0) lines.push(`opened by none of the keys (set these endpoints again): ${report.unopenable.join(', ')}`);
  else lines.push('none is sealed with a previous key now');
  return { output: { text: lines.join('\n'), json: report }, code: report.unopenable.length > 0 ? 1 : 0 };
}
