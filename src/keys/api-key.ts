/**
 * API key format (contract §1): `rk_<key id: 16 hex>_<secret: 32 random bytes, base64url><checksum>`.
 * The key id finds the record; only an HMAC of the secret is stored, compared in constant time.
 * The checksum (6 base62 digits of the CRC-32 of all before it, as GitHub's tokens carry) lets a
 * secret scanner tell a real key from noise offline, and the gateway refuse a mistyped or truncated
 * key before any store is asked. Keys issued before it existed have none and still work.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { crc32 } from 'node:zlib';
import { repeatsHeader } from '../http/header-lines.js';

const KEY_PATTERN = /^(rk_([0-9a-f]{16})_([A-Za-z0-9_-]{43}))([0-9A-Za-z]{6})?$/;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const CHECKSUM_DIGITS = 6; // 62^6 > 2^32: every CRC-32 fits

/** The checksum of a key's body (`rk_<key id>_<secret>`): its CRC-32 in base62, 6 digits, zero-padded. */
export function keyChecksum(body: string): string {
  let value = crc32(body);
  let digits = '';
  for (let i = 0; i < CHECKSUM_DIGITS; i++) {
    digits = BASE62[value % 62] + digits;
    value = Math.floor(value / 62);
  }
  return digits;
}

export interface ParsedKey {
  keyId: string;
  secret: string;
}

/**
 * The key id of anything shaped like a key, its checksum unchecked: for the logs' "which key was
 * sent", and for the query string's refusal of keys (a key whose checksum was mangled still holds
 * the secret).
 */
export function sentKeyId(raw: string): string | undefined {
  return KEY_PATTERN.exec(raw)?.[2];
}

/** Returns null for anything that is not a well-formed key, before any store is asked. */
export function parseApiKey(raw: string): ParsedKey | null {
  const match = KEY_PATTERN.exec(raw);
  if (!match) return null;
  const checksum = match[4];
  if (checksum !== undefined && checksum !== keyChecksum(match[1] as string)) return null;
  return { keyId: match[2] as string, secret: match[3] as string };
}

/**
 * An authentication scheme's name is case-insensitive (RFC 9110 §11.1): `bearer` and `BEARER` too;
 * one or more spaces part it from the credentials (§11.6.2, `auth-scheme [ 1*SP token68 ]`).
 */
const BEARER = /^Bearer +([^\s]+)$/i;

/**
 * Whether the header uses the Bearer scheme at all. RFC 6750 §3.1: a request that authenticates
 * with another scheme (Basic) lacks Bearer credentials, and its 401 carries no error code; only a
 * Bearer credential that is malformed, unknown or ended is `error="invalid_token"`.
 */
export function isBearerScheme(header: string): boolean {
  return /^Bearer(?: |$)/i.test(header);
}

/** The key (or admin token) in an Authorization header, or undefined (none, or null: several). */
export function bearerKey(header: string | null | undefined): string | undefined {
  return header == null ? undefined : BEARER.exec(header)?.[1];
}

/**
 * The request's Authorization header; null when it came more than once. Node keeps the first and
 * drops the rest, so a second credential would pass unseen, and a proxy in front may have read
 * another one than the gateway authenticates.
 */
export function soleAuthorization(request: Pick<IncomingMessage, 'headers' | 'rawHeaders'>): string | null | undefined {
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  return repeatsHeader(request.rawHeaders, 'authorization') ? null : header;
}

/**
 * A new key: a random id unless one is given (16 hex digits), and always a new random secret; its
 * checksum when `withChecksum` (a release before checksums refuses such a key as malformed).
 */
export function generateApiKey(keyId: string = randomBytes(8).toString('hex'), withChecksum = true): { keyId: string; secret: string; key: string } {
  if (!/^[0-9a-f]{16}$/.test(keyId)) throw new RangeError('a key id is 16 hex digits');
  const secret = randomBytes(32).toString('base64url');
  const body = `rk_${keyId}_${secret}`;
  return { keyId, secret, key: withChecksum ? body + keyChecksum(body) : body };
}

export function hashSecret(secret: string, pepper: string): string {
  return createHmac('sha256', pepper).update(secret).digest('hex');
}

export function secretMatches(secret: string, storedHash: string, pepper: string): boolean {
  const actual = Buffer.from(hashSecret(secret, pepper), 'hex');
  const expected = Buffer.from(storedHash, 'hex');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
