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
  private readonly previousKeys: readonly Buffer[];

  /** `previousKeys`: keys of earlier rotations (config webhooks.previousEncryptionKeys), which only open. */
  constructor(key: Buffer, previousKeys: readonly Buffer[] = []) {
    if ([key, ...previousKeys].some((one) => one.length !== 32)) throw new RangeError('the webhook encryption key must be 32 bytes');
    this.key = key;
    this.previousKeys = previousKeys;
  }

  /** Tells keys apart without revealing them: an HMAC under the key (stores.webhooks.holdsSealingKey). */
  fingerprint(): string {
    return fingerprintOf(this.key);
  }

  /** The previous keys' fingerprints: a store that records one of them is taken over by this key. */
  previousFingerprints(): string[] {
    return this.previousKeys.map(fingerprintOf);
  }

  /** `v1.<iv>.<tag>.<ciphertext>`, base64url parts. */
  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), ciphertext].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
  }

  /** Throws when the value was sealed with none of the keys (or was altered). */
  open(sealed: string): string {
    return this.unseal(sealed).plaintext;
  }

  /**
   * The value sealed with the current key: itself when it is, else opened with a previous key and
   * sealed anew. Throws when none of the keys opens it.
   */
  reseal(sealed: string): string {
    const { plaintext, current } = this.unseal(sealed);
    return current ? sealed : this.seal(plaintext);
  }

  private unseal(sealed: string): { plaintext: string; current: boolean } {
    const [version, iv, tag, ciphertext] = sealed.split('.');
    if (version !== VERSION || iv === undefined || tag === undefined || ciphertext === undefined) {
      throw new Error('not a sealed webhook secret');
    }
    const parts = { iv: Buffer.from(iv, 'base64url'), tag: Buffer.from(tag, 'base64url'), ciphertext: Buffer.from(ciphertext, 'base64url') };
    for (const key of [this.key, ...this.previousKeys]) {
      const plaintext = openWith(key, parts);
      if (plaintext !== undefined) return { plaintext, current: key === this.key };
    }
    throw new Error('the webhook secret opens with none of the configured encryption keys');
  }
}

function fingerprintOf(key: Buffer): string {
  return createHmac('sha256', key).update('reseller-gateway webhook sealing key').digest('hex');
}

/** The plaintext, or undefined when `key` is not the one the value was sealed with (GCM's tag fails). */
function openWith(key: Buffer, parts: { iv: Buffer; tag: Buffer; ciphertext: Buffer }): string | undefined {
  const decipher = createDecipheriv('aes-256-gcm', key, parts.iv, { authTagLength: TAG_BYTES });
  try {
    decipher.setAuthTag(parts.tag);
    return Buffer.concat([decipher.update(parts.ciphertext), decipher.final()]).toString('utf8');
  } catch {
    return undefined;
  }
}

/**
 * The configured key; in sandbox mode (config refuses to start elsewhere without one) a key derived
 * from the sandbox's own pepper, so secrets survive a restart with Redis stores.
 */
export function secretBoxFor(config: Pick<GatewayConfig, 'webhooks' | 'keys'>): SecretBox {
  const previous = config.webhooks.previousEncryptionKeys.map((key) => Buffer.from(key, 'base64'));
  if (config.webhooks.encryptionKey) return new SecretBox(Buffer.from(config.webhooks.encryptionKey, 'base64'), previous);
  const derived = hkdfSync('sha256', resolvePepper(config), Buffer.alloc(0), 'reseller-gateway webhook secrets', 32);
  return new SecretBox(Buffer.from(derived), previous);
}
