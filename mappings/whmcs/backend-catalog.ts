/**
 * The WHMCS catalog: GetProducts (cached by the client), parsed once per answer object, and its
 * allow-listed products mapped to v1 once per answer, so every cache hit returns the same objects.
 */
import { withFreshness } from '../../src/upstream/client.js';
import type { Freshness } from '../../src/upstream/policy.js';
import type { Product } from '../../src/v1/schemas.js';
import type { WhmcsCalls } from './backend-calls.js';
import type { WhmcsConfig } from './config.js';
import { mapProduct } from './map.js';
import { ProductsAnswer, type RawProduct } from './parse.js';

/** One GetProducts answer, parsed, and its public products mapped to v1 (on first use). */
interface Catalog {
  products: RawProduct[];
  published?: PublishedCatalog;
}

/** The public products as v1 objects, deep-frozen: shared by every caller, never to be mutated. */
export interface PublishedCatalog {
  list: readonly Product[];
  byId: ReadonlyMap<string, Product>;
}

/**
 * `freshness`: `fresh` for the checks before a write, which a stale catalog would let through (WHMCS
 * then silently bills another cycle). `deadline`: the request's (CallContext.deadline), which the
 * read serves; the shared catalog is read with no trace.
 */
export interface WhmcsCatalog {
  /** Every product, hidden and retired ones included (WHMCS cannot tell them apart). */
  all(freshness?: Freshness, deadline?: number): Promise<RawProduct[]>;
  /** The product when it is allow-listed. */
  publicProduct(id: string, freshness?: Freshness, deadline?: number): Promise<RawProduct | undefined>;
  /**
   * The allow-listed products as v1 objects, mapped once per catalog answer (not per request):
   * the same frozen objects are returned until the cached answer is replaced.
   */
  published(deadline?: number): Promise<PublishedCatalog>;
}

/** The catalog as the calls of one request read it: under its deadline. */
export function catalogUntil(catalog: WhmcsCatalog, deadline: number | undefined): WhmcsCatalog {
  if (deadline === undefined) return catalog;
  return {
    all: (freshness) => catalog.all(freshness, deadline),
    publicProduct: (id, freshness) => catalog.publicProduct(id, freshness, deadline),
    published: () => catalog.published(deadline),
  };
}

/** Freezes a freshly mapped value and everything in it (plain objects and arrays only). */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

export function createWhmcsCatalog(calls: WhmcsCalls, config: WhmcsConfig): WhmcsCatalog {
  const publicProductIds = new Set(config.publicProductIds);
  // The catalog answer is cached by the client; parse (and map) each answer object once.
  const catalogs = new WeakMap<object, Catalog>();

  async function current(freshness?: Freshness, deadline?: number): Promise<Catalog> {
    const answer = await calls.client.call('GetProducts', {}, withFreshness(deadline === undefined ? undefined : { deadline }, freshness));
    let entry = catalogs.get(answer);
    if (!entry) {
      entry = { products: calls.parseCalled('GetProducts', {}, answer, ProductsAnswer) };
      catalogs.set(answer, entry);
    }
    return entry;
  }

  async function all(freshness?: Freshness, deadline?: number): Promise<RawProduct[]> {
    return (await current(freshness, deadline)).products;
  }

  return {
    all,
    publicProduct: async (id, freshness, deadline) => (publicProductIds.has(id) ? (await all(freshness, deadline)).find((product) => product.pid === id) : undefined),
    async published(deadline) {
      const entry = await current(undefined, deadline);
      if (!entry.published) {
        const list = entry.products.filter((product) => publicProductIds.has(product.pid)).map(mapProduct);
        const byId = new Map<string, Product>();
        // The first of duplicate ids wins, as a lookup in the catalog would find it.
        for (const product of list) if (!byId.has(product.id)) byId.set(product.id, product);
        entry.published = { list: deepFreeze(list), byId };
      }
      return entry.published;
    },
  };
}
