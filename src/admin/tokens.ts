/**
 * Admin tokens: who may call the admin API, and what for. A token is `rgadm_<32 random bytes,
 * base64url>`; the config holds only its SHA-256 (`sha256:<hex>`), its name and its scopes. An
 * unsalted hash is enough here: a token has 256 random bits, so its hash cannot be reversed by
 * guessing, and it needs no server secret, so `reseller-keys admin-token create` can print the
 * config line anywhere. Plaintext tokens in the config are refused.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

export const ADMIN_SCOPES = ['admin:accounts', 'admin:keys', 'admin:webhooks', 'admin:read'] as const;
export type AdminScope = (typeof ADMIN_SCOPES)[number];

const TOKEN_PATTERN = /^rgadm_[A-Za-z0-9_-]{43}$/;

export const AdminTokenSchema = z.strictObject({
  /** Who the audit log names for the token's calls (a panel, a person). */
  name: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'must be 1 to 64 characters of A-Z a-z 0-9 _ . - (starting with a letter or digit)'),
  hash: z.string().regex(/^sha256:[0-9a-f]{64}$/, 'must be sha256:<64 hex digits> (reseller-keys admin-token create prints it)'),
  scopes: z.array(z.enum(ADMIN_SCOPES)).min(1),
});
export type AdminTokenConfig = z.infer<typeof AdminTokenSchema>;

const PLAINTEXT_REFUSED =
  'plaintext admin tokens are not accepted in the config: give its hash instead (reseller-keys admin-token create prints the line)';

/** The config's token list: a plaintext `token` refused with a message that says what to do; names unique. */
export const AdminTokensSchema = z.preprocess(
  (value, context) => {
    if (!Array.isArray(value)) return value;
    return value.map((entry: unknown, index) => {
      if (typeof entry !== 'object' || entry === null || !('token' in entry)) return entry;
      context.addIssue({ code: 'custom', path: [index, 'token'], message: PLAINTEXT_REFUSED, input: entry });
      // Said once: the strict schema below would call it an unknown key too.
      const { token: _plaintext, ...rest } = entry as Record<string, unknown>;
      return rest;
    });
  },
  z.array(AdminTokenSchema).superRefine((tokens, context) => {
    const seen = new Set<string>();
    for (const [index, token] of tokens.entries()) {
      if (seen.has(token.name)) context.addIssue({ code: 'custom', path: [index, 'name'], message: `the name ${token.name} is used twice` });
      seen.add(token.name);
    }
  }),
);

/** The config's `admin` section. */
export const AdminConfigSchema = z.strictObject({
  /** Who may call the admin API: name, `sha256:` hash of the token, admin scopes (ADMIN_TOKENS, JSON). */
  tokens: AdminTokensSchema.default([]),
  /** Calls per admin token in any rolling minute. */
  perMinute: z.number().int().positive().default(300),
  /** The admin audit log: one JSON line per admin call, apart from the app log and the credentials audit. */
  auditFile: z.string().default('data/admin-audit.log'),
});

export function hashAdminToken(token: string): string {
  return `sha256:${createHash('sha256').update(token).digest('hex')}`;
}

/** A new token and the config entry that admits it; the token itself is shown once and kept nowhere. */
export function mintAdminToken(name: string, scopes: AdminScope[]): { token: string; entry: AdminTokenConfig } {
  const token = `rgadm_${randomBytes(32).toString('base64url')}`;
  return { token, entry: AdminTokenSchema.parse({ name, hash: hashAdminToken(token), scopes: [...new Set(scopes)] }) };
}

/** The configured tokens, checked in constant time per entry. */
export class AdminTokens {
  private readonly entries: Array<AdminTokenConfig & { digest: Buffer }>;

  constructor(tokens: readonly AdminTokenConfig[]) {
    this.entries = tokens.map((token) => ({ ...token, digest: Buffer.from(token.hash.slice('sha256:'.length), 'hex') }));
  }

  get size(): number {
    return this.entries.length;
  }

  /** The token's entry, or null when the text is not a configured token. */
  find(raw: string): AdminTokenConfig | null {
    if (!TOKEN_PATTERN.test(raw)) return null;
    const digest = createHash('sha256').update(raw).digest();
    let found: AdminTokenConfig | null = null;
    // Every entry is compared, so the time taken does not say which one matched.
    for (const { digest: expected, ...entry } of this.entries) {
      if (timingSafeEqual(digest, expected) && found === null) found = entry;
    }
    return found;
  }
}
