import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import type { Product } from '../../../src/v1/schemas.js';
import { createWhmcsBackend } from '../../../mappings/whmcs/backend.js';
import { CTX, CUSTOMER, FakeWhmcs, rejectsWith, testConfig } from './fake-whmcs.js';
import * as answers from './fixtures/answers.js';

/** Every object and array reachable from `value` is frozen. */
function assertDeeplyFrozen(value: unknown, path = 'value'): void {
  if (typeof value !== 'object' || value === null) return;
  assert.ok(Object.isFrozen(value), `${path} is frozen`);
  for (const [key, child] of Object.entries(value)) assertDeeplyFrozen(child, `${path}.${key}`);
}

/** The same catalog with VPS S renamed: a new upstream answer, told apart by its content. */
const renamedCatalog = {
  ...answers.catalog,
  products: { product: [{ ...answers.vpsS, name: 'VPS S (2nd gen)' }, answers.vpsM, answers.setupFeeOnce, answers.freeTrial, answers.hiddenLegacy] },
};

/** The same catalog once staff disabled the annual cycle of VPS M. */
const annualDisabledCatalog = {
  ...answers.catalog,
  products: {
    product: [answers.vpsS, { ...answers.vpsM, pricing: { ...answers.vpsM.pricing, USD: { ...answers.vpsM.pricing.USD, annually: '-1.00' } } }, answers.setupFeeOnce, answers.freeTrial, answers.hiddenLegacy],
  },
};

t.test('WHMCS backend: the mapped catalog is cached with the answer', async (t) => {
  let whmcs: FakeWhmcs;
  t.beforeEach(() => {
    whmcs = new FakeWhmcs();
  });
  t.afterEach(() => whmcs.close());

  t.test('a cache hit returns the very same v1 objects: mapped once per answer', async () => {
    whmcs.answer('GetProducts', answers.catalog);
    const backend = whmcs.backend();
    const first = await backend.listProducts(CTX);
    const second = await backend.listProducts(CTX);
    assert.equal(second, first, 'the same list');
    assert.deepEqual(first.map((product) => product.id), ['1', '2', '3', '4']);
    // getProduct answers the same objects the list holds.
    for (const product of first) assert.equal(await backend.getProduct(product.id, CTX), product);
    assert.equal(await backend.getProduct('2', CTX), await backend.getProduct('2', CTX));
    assert.equal(whmcs.requests('GetProducts').length, 1);
  });

  t.test('the shared objects are frozen all the way down: no caller can change what the next one gets', async () => {
    whmcs.answer('GetProducts', answers.catalog);
    const backend = whmcs.backend();
    const list = await backend.listProducts(CTX);
    assertDeeplyFrozen(list, 'list');
    const product = list[1] as Product;
    assert.throws(() => {
      product.name = 'changed';
    }, TypeError);
    assert.throws(() => list.push(product), TypeError);
    assert.throws(() => product.prices.pop(), TypeError);
    assert.equal((await backend.getProduct('2', CTX)).name, 'VPS M & Backup');
  });

  t.test('a new upstream answer after the TTL is mapped again, into new objects', async () => {
    whmcs.answer('GetProducts', answers.catalog, { times: 1 }).answer('GetProducts', renamedCatalog);
    const backend = whmcs.backend({ productCacheTtlMs: 200 });
    const first = await backend.listProducts(CTX);
    const firstProduct = await backend.getProduct('1', CTX);
    assert.equal(firstProduct.name, 'VPS S');
    await sleep(250);
    // Past the TTL the cached answer is served while one refresh runs; then the new one is used.
    let next = await backend.listProducts(CTX);
    for (const deadline = Date.now() + 3_000; next === first && Date.now() < deadline; ) {
      await sleep(5);
      next = await backend.listProducts(CTX);
    }
    assert.notEqual(next, first, 'a new list once the new answer is in');
    assert.equal(whmcs.requests('GetProducts').length, 2);
    const nextProduct = await backend.getProduct('1', CTX);
    assert.notEqual(nextProduct, firstProduct);
    assert.equal(nextProduct.name, 'VPS S (2nd gen)');
    assert.equal(next[0], nextProduct);
    // Unchanged products are new objects too (the whole answer is mapped again), equal in content.
    assert.notEqual(next[1], first[1]);
    assert.deepEqual(next[1], first[1]);
    // The new answer is cached like the first: same objects on every hit.
    assert.equal(await backend.listProducts(CTX), next);
    // What callers already hold is left as it was.
    assert.equal(first[0]?.name, 'VPS S');
  });

  t.test('an order is checked against the catalog within its TTL, never a stale one (the product list may be stale)', async () => {
    // The refresh takes a while: long enough for the order to come while it runs.
    whmcs
      .answer('GetProducts', answers.catalog, { times: 1 })
      .answer('GetProducts', annualDisabledCatalog, { delayMs: 50 })
      .answer('GetClientsDetails', answers.clientDetails)
      .answer('AddOrder', answers.addOrder);
    let clock = 1_000_000;
    const backend = createWhmcsBackend(testConfig(), { dispatcher: whmcs.agent, logger: whmcs.logger, now: () => clock });
    await backend.listProducts(CTX);
    clock += 5 * 60_000;
    // Past the TTL the list is still served from the cache while its refresh runs...
    const annual = (await backend.getProduct('2', CTX)).prices.some((price) => price.billing_cycle === 'annually');
    assert.equal(annual, true, 'the stale list still offers annually');
    // ...but the order waits for that refresh: WHMCS would silently bill another cycle for a disabled one.
    const order = backend.placeOrder(CUSTOMER, { product_id: '2', billing_cycle: 'annually' }, { ...CTX, idempotencyKey: 'k1', idempotencyRecord: 'rec1' });
    const refused = await rejectsWith(order, 'validation');
    assert.match(refused.detail, /billing_cycle: "annually" is not offered/);
    assert.equal(whmcs.requests('AddOrder').length, 0);
    assert.equal(whmcs.requests('GetProducts').length, 2, 'the order joined the refresh in flight');
    await backend.close();
  });
});

t.test('WHMCS backend: a catalog answer of an unexpected shape is not kept', async (t) => {
  const whmcs = new FakeWhmcs();
  t.teardown(() => whmcs.close());
  // A glitch: "success" with the products cut away, as a truncated or rewritten answer can be.
  whmcs.answer('GetProducts', { ...answers.catalog, products: 'unavailable' }, { times: 1 });
  const backend = whmcs.backend();
  await rejectsWith(backend.listProducts(CTX), 'upstream_error');
  whmcs.answer('GetProducts', answers.catalog);
  const products = await backend.listProducts(CTX);
  assert.deepEqual(products.map((product) => product.id), ['1', '2', '3', '4'], 'the next read asks WHMCS again, within the TTL');
  assert.equal(whmcs.requests('GetProducts').length, 2);
});
