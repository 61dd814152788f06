/** The permissions a key can carry (spec §5); each endpoint needs exactly one of them, or none. */
export const SCOPES = [
  'read:products',
  'write:orders',
  'read:orders',
  'read:services',
  'write:services',
  'read:credentials',
  'read:billing',
  'read:webhooks',
  'write:webhooks',
] as const;
export type Scope = (typeof SCOPES)[number];
