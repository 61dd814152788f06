/**
 * The documented response schema shapes every answer: a field the contract does not name never
 * leaves the gateway, whether the handler's body is built per request or is a shared (frozen)
 * object returned again and again, whose output the pipeline computes only once.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import t from 'tap';
import type { FastifyInstance } from 'fastify';
import type { Backend } from '../../src/backend/backend.js';
import { buildApp } from '../../src/app.js';
import { MemoryAuditLog } from '../../src/audit.js';
import { parseConfig, type ResolvedConfig } from '../../src/config.js';
import { KeyService } from '../../src/keys/key-service.js';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import type { Product } from '../../src/v1/schemas.js';
import { bearer, fakeResolve, TEST_PEPPER } from '../helpers/gateway.js';
import { BACKENDS } from '../../mappings/index.js';

const UNDOCUMENTED = ['cost_price', 'admin_notes', 'server_ip', 'module'];

/** A v1 product plus undocumented fields at every level, as a careless backend might answer. */
function leakyProduct(id: string, name: string): Product {
  const product = {
    id,
    name,
    description: 'Two vCPUs',
    type: 'server',
    pay_type: 'recurring',
    prices: [{ currency: 'USD', billing_cycle: 'monthly', price: '9.99', setup_fee: '0.00', cost_price: '3.10' }],
    config_options: [
      {
        id: '4',
        name: 'Operating System',
        type: 'dropdown',
        min_quantity: null,
        max_quantity: null,
        choices: [{ id: '11', name: 'Debian 12', prices: [], server_ip: '10.0.0.5' }],
        admin_notes: 'licence key in vault',
      },
    ],
    module: 'solusvmpro',
    admin_notes: 'margin 70%',
  };
  return product as unknown as Product;
}

/** The same product as the contract documents it. */
function documented(id: string, name: string): Product {
  return {
    id,
    name,
    description: 'Two vCPUs',
    type: 'server',
    pay_type: 'recurring',
    prices: [{ currency: 'USD', billing_cycle: 'monthly', price: '9.99', setup_fee: '0.00' }],
    config_options: [
      {
        id: '4',
        name: 'Operating System',
        type: 'dropdown',
        min_quantity: null,
        max_quantity: null,
        choices: [{ id: '11', name: 'Debian 12', prices: [] }],
      },
    ],
  };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

function assertNoLeak(text: string): void {
  for (const field of UNDOCUMENTED) assert.ok(!text.includes(field), `"${field}" leaked: ${text}`);
  for (const value of ['3.10', '10.0.0.5', 'vault', 'margin', 'solusvmpro']) assert.ok(!text.includes(value), `"${value}" leaked`);
}

/** What the stub backend answers next; each test sets it. */
interface Answers {
  list: () => Product[];
  product: (id: string) => Product;
}

function stubBackend(answers: Answers): Backend {
  const unused = async (): Promise<never> => {
    throw new Error('not used by these tests');
  };
  return {
    name: 'stub',
    capabilities: { serviceActions: [], reconcilesOrders: false },
    writeTimeoutMs: 1_000,
    listProducts: async () => answers.list(),
    getProduct: async (id) => answers.product(id),
    getAccount: unused,
    placeOrder: unused,
    findOrderByIdempotencyKey: unused,
    getOrder: unused,
    listServices: unused,
    getService: unused,
    getCredentials: unused,
    runServiceAction: unused,
    getBalance: unused,
    listInvoices: unused,
    getInvoiceDocument: unused,
    ping: async () => true,
    close: async () => undefined,
  };
}

t.test('the documented response schema strips undocumented fields', async (t) => {
  const answers: Answers = { list: () => [], product: () => assert.fail('no product set') };
  let app: FastifyInstance;
  let headers: Record<string, string>;

  t.before(async () => {
    const config = parseConfig({
      logLevel: 'warn',
      keys: { pepper: TEST_PEPPER },
      webhooks: { encryptionKey: Buffer.alloc(32, 7).toString('base64') },
      upstream: { backend: 'whmcs', whmcs: { url: 'https://billing.example.test/', identifier: 'id', secret: 'secret', publicProductIds: ['1'] } },
    }, BACKENDS) as ResolvedConfig;
    const stores = createMemoryStores();
    const logStream = new Writable({ write: (_chunk, _encoding, done) => done() });
    app = await buildApp(config, { backend: stubBackend(answers), stores, audit: new MemoryAuditLog(), logStream, resolveHost: fakeResolve });
    await app.ready();
    const keys = new KeyService(stores.keys, TEST_PEPPER);
    await keys.createAccount({ id: 'acme', name: 'Acme Hosting', upstreamId: '1' });
    headers = bearer((await keys.issue({ accountId: 'acme', name: 'products', scopes: ['read:products'] })).key);
  });
  t.teardown(() => app.close());
  t.beforeEach(() => {
    answers.list = () => [];
    answers.product = () => assert.fail('no product set');
  });

  const get = async (url: string): Promise<unknown> => {
    const response = await app.inject({ method: 'GET', url, headers });
    assert.equal(response.statusCode, 200, response.body);
    assert.match(String(response.headers['content-type']), /^application\/json/);
    assertNoLeak(response.body);
    return response.json();
  };

  t.test('a body built per request (not frozen)', async () => {
    answers.list = () => [leakyProduct('1', 'VPS S')];
    answers.product = (id) => leakyProduct(id, 'VPS S');
    for (let round = 0; round < 2; round += 1) {
      assert.deepEqual(await get('/v1/products'), { data: [documented('1', 'VPS S')] });
      assert.deepEqual(await get('/v1/products/1'), documented('1', 'VPS S'));
    }
  });

  t.test('the same frozen list returned again: stripped every time', async () => {
    const shared = deepFreeze([leakyProduct('1', 'VPS S'), leakyProduct('2', 'VPS M')]);
    answers.list = () => shared;
    const expected = { data: [documented('1', 'VPS S'), documented('2', 'VPS M')] };
    for (let round = 0; round < 3; round += 1) assert.deepEqual(await get('/v1/products'), expected);
  });

  t.test('the same frozen product returned again: stripped every time', async () => {
    const shared = deepFreeze(leakyProduct('1', 'VPS S'));
    answers.product = () => shared;
    for (let round = 0; round < 3; round += 1) assert.deepEqual(await get('/v1/products/1'), documented('1', 'VPS S'));
  });

  t.test('each distinct frozen object is parsed for itself (no answer is reused for another object)', async () => {
    let name = 'VPS S';
    answers.list = () => deepFreeze([leakyProduct('1', name)]);
    answers.product = (id) => deepFreeze(leakyProduct(id, name));
    assert.deepEqual(await get('/v1/products'), { data: [documented('1', 'VPS S')] });
    assert.deepEqual(await get('/v1/products/1'), documented('1', 'VPS S'));
    name = 'VPS S (2nd gen)';
    assert.deepEqual(await get('/v1/products'), { data: [documented('1', name)] });
    assert.deepEqual(await get('/v1/products/1'), documented('1', name));
  });

  t.test('an object that is not frozen is never memoised: a change to it shows', async () => {
    const product = leakyProduct('1', 'VPS S');
    answers.product = () => product;
    assert.deepEqual(await get('/v1/products/1'), documented('1', 'VPS S'));
    product.name = 'Renamed';
    assert.deepEqual(await get('/v1/products/1'), documented('1', 'Renamed'));
  });

  t.test('a frozen body that does not match the schema fails every time (a failure is not memoised)', async () => {
    const broken = deepFreeze({ ...leakyProduct('1', 'VPS S'), pay_type: 'sometimes' }) as unknown as Product;
    answers.product = () => broken;
    for (let round = 0; round < 2; round += 1) {
      const response = await app.inject({ method: 'GET', url: '/v1/products/1', headers });
      assert.equal(response.statusCode, 500, response.body);
      assertNoLeak(response.body);
    }
  });
});
