/**
 * Webhook signing secrets at rest: AES-256-GCM with a key from config, so a copy of the store
 * (a Redis dump, a backup) does not hand out every endpoint's secret.
 */
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import type { GatewayConfig } from '../config.js';
import { resolvePepper } from '../keys/pepper.js';

const VERSION = 'v1';
/** GCM's full tag. Without this length stated, decipher accepts a tag cut to as few as 4 bytes. */
const TAG_BYTES = 16;

export class SecretBox {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new RangeError('the webhook encryption key must be 32 bytes');
    this.key = key;
  }

  /** Tells keys apart without revealing them: an HMAC under the key (stores.webhooks.holdsSealingKey). */
  fingerprint(): string {
    return createHmac('sha256', this.key).update('reseller-gateway webhook sealing key').digest('hex');
  }

  /** `v1.<iv>.<tag>.<ciphertext>`, base64url parts. */
  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), ciphertext].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
  }

  /** Throws when the value was not sealed with this key (or was altered). */
  open(sealed: string): string {
    const [version, iv, tag, ciphertext] = sealed.split('.');
    if (version !== VERSION || iv === undefined || tag === undefined || ciphertext === undefined) {
      throw new Error('not a sealed webhook secret');
    }
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
  }
}

/**
 * The configured key; in sandbox mode (config refuses to start elsewhere without one) a key derived
 * from the sandbox's own pepper, so secrets survive a restart with Redis stores.
 */
export function secretBoxFor(config: Pick<GatewayConfig, 'webhooks' | 'keys'>): SecretBox {
  if (config.webhooks.encryptionKey) return new SecretBox(Buffer.from(config.webhooks.encryptionKey, 'base64'));
  const derived = hkdfSync('sha256', resolvePepper(config), Buffer.alloc(0), 'reseller-gateway webhook secrets', 32);
  return new SecretBox(Buffer.from(derived));
}
