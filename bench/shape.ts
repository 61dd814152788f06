/**
 * The load's shape: many keys over fewer accounts, sent from many source addresses through a
 * trusted proxy (X-Forwarded-For), every key, account and address within its limits.
 *
 * The limits are the defaults of contract §4 (per key 60 + burst 20, per account 120, per source
 * address 600 per window). Only the window is shortened, to what makes the offered load use a fixed
 * share of the account limit (the tightest one at this shape): the counters then hold what they
 * hold in real traffic at that share of the limits, so Redis does the same work per request as it
 * would at the real 60 s, and no limit is raised out of reach (which would make the windows'
 * logs far larger than any real client can).
 */
import type { Redis } from 'ioredis';
import { KeyService } from '../src/keys/key-service.js';
import type { KeyStore } from '../src/stores/types.js';
import type { WrkRequest } from './wrk.js';

export interface LoadShape {
  /** Account ids are `<idPrefix>-<n>`. */
  idPrefix: string;
  keys: number;
  accounts: number;
  sourceAddresses: number;
}

export const DEFAULT_SHAPE: LoadShape = { idPrefix: 'bench', keys: 4_000, accounts: 400, sourceAddresses: 200 };

/** Default limits per window (contract §4). */
const ACCOUNT_LIMIT = 120;
const KEY_RATE = 60;
const ADDRESS_LIMIT = 600;

export interface IssuedKey {
  key: string;
  accountId: string;
  address: string;
}

/**
 * Creates the accounts and keys; each key is always sent from one address. The simulator has two
 * customers, so the accounts share them: written as restored records (putAccount), which the
 * one-customer-one-account rule does not refuse, as an upgrade keeps accounts that shared one.
 */
export async function issueKeys(store: KeyStore, pepper: string, shape: LoadShape, scopes: Parameters<KeyService['issue']>[0]['scopes']): Promise<IssuedKey[]> {
  const service = new KeyService(store, pepper);
  const createdAt = new Date().toISOString();
  for (let index = 0; index < shape.accounts; index += 1) {
    await store.putAccount({ id: `${shape.idPrefix}-${index}`, name: `Bench ${index}`, upstreamId: String((index % 2) + 1), createdAt });
  }
  const keys: IssuedKey[] = [];
  for (let start = 0; start < shape.keys; start += 200) {
    const batch = Array.from({ length: Math.min(200, shape.keys - start) }, (_, offset) => start + offset);
    keys.push(
      ...(await Promise.all(
        batch.map(async (index) => {
          const accountId = `${shape.idPrefix}-${index % shape.accounts}`;
          const { key } = await service.issue({ accountId, name: `bench key ${index}`, scopes });
          return { key, accountId, address: sourceAddress(index % shape.sourceAddresses) };
        }),
      )),
    );
  }
  return keys;
}

/** 10.x.y.z addresses (a documentation-free private range, as behind a load balancer). */
function sourceAddress(index: number): string {
  return `10.${(index >> 16) & 255}.${(index >> 8) & 255}.${index & 255}`;
}

/**
 * The window (ms) that puts `requestsPerSecond` at `share` of the tightest limit of `shape`, at
 * least 100 ms. Round-robin over the keys spreads requests evenly over keys, accounts and addresses.
 */
export function windowFor(shape: LoadShape, requestsPerSecond: number, share: number): number {
  const perWindowAtOneMs = Math.min(shape.accounts * ACCOUNT_LIMIT, shape.keys * KEY_RATE, shape.sourceAddresses * ADDRESS_LIMIT);
  return Math.max(100, Math.floor((share * perWindowAtOneMs * 1000) / requestsPerSecond));
}

/** A key's request headers: the key, and its address as the trusted proxy forwards it. */
export function keyHeaders({ key, address }: IssuedKey): Record<string, string> {
  return { authorization: `Bearer ${key}`, 'x-forwarded-for': address };
}

/** One request per key, in key order, each from its key's address. */
export function requestsFor(path: string, keys: readonly IssuedKey[]): WrkRequest[] {
  return keys.map((key) => ({ path, headers: keyHeaders(key) }));
}

/** The body of a GET that must answer 200. */
export async function fetchBody(url: string, headers: Record<string, string>): Promise<string> {
  const response = await fetch(url, { headers });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET ${url} answered ${response.status}: ${text}`);
  return text;
}

/** Drops every rate-limit counter, so that each run starts from rest. */
export async function clearCounters(admin: Redis, prefix: string): Promise<void> {
  for (const pattern of [`${prefix}{ip:*`, `${prefix}{acct:*}:window`, `${prefix}{acct:*:limits`]) {
    let cursor = '0';
    do {
      const [next, found] = await admin.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (found.length > 0) await admin.del(...found);
    } while (cursor !== '0');
  }
}
