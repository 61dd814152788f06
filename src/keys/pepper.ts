import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { GatewayConfig } from '../config.js';

/**
 * The server secret mixed into key hashes. Production configures it (config refuses to start
 * without). Sandbox mode makes one on first use and keeps it beside the key file, so the key CLI
 * and a running sandbox gateway hash alike.
 */
export function resolvePepper(config: Pick<GatewayConfig, 'keys'>): string {
  if (config.keys.pepper) return config.keys.pepper;
  const path = join(dirname(config.keys.file), 'sandbox-pepper');
  if (existsSync(path)) return readFileSync(path, 'utf8').trim();
  mkdirSync(dirname(path), { recursive: true });
  const pepper = randomBytes(32).toString('base64url');
  writeFileSync(path, `${pepper}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return pepper;
}
