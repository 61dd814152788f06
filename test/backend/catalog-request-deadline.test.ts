/**
 * The catalog under the request's deadline: GET /v1/products (and a product by id) waits for the
 * shared catalog read only until its request's deadline, as every other read does; the load goes on
 * for the others. Before, both backends read the catalog without the request's context: the
 * request waited the catalog's own timeout (15 s by default) whatever requestDeadlineMs said, and a
 * WHMCS order for a stock-controlled product read it again, uncached, with no regard to it.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import type { BackendError } from '../../src/backend/backend.js';
import { createFossbillingBackend } from '../../mappings/fossbilling/backend.js';
import { FossbillingConfigSchema } from '../../mappings/fossbilling/config.js';
import { FakeWhmcs } from '../mappings/whmcs/fake-whmcs.js';
import * as whmcsAnswers from '../mappings/whmcs/fixtures/answers.js';
import * as fossbillingAnswers from '../mappings/fossbilling/fixtures/answers.js';

/** The catalog answers after 2.5 s, well within its own timeout and well after the 1.2 s deadline. */
const CATALOG_DELAY_MS = 2_500;
const DEADLINE_MS = 1_200;

const timedOut = (work: Promise<unknown>): Promise<BackendError> =>
  work.then(
    () => assert.fail('the catalog was waited for past the request deadline'),
    (error: BackendError) => {
      assert.equal(error.kind, 'timeout', String(error));
      return error;
    },
  );

t.test('WHMCS: the catalog is waited for until the request deadline', async (t) => {
  const whmcs = new FakeWhmcs();
  t.teardown(() => whmcs.close());
  whmcs.answer('GetProducts', whmcsAnswers.catalog, { delayMs: CATALOG_DELAY_MS });
  const backend = whmcs.backend();
  await Promise.all([
    timedOut(backend.listProducts({ requestId: 'r1', deadline: Date.now() + DEADLINE_MS })),
    timedOut(backend.getProduct('1', { requestId: 'r2', deadline: Date.now() + DEADLINE_MS })),
  ]);
});

t.test('FOSSBilling: the catalog is waited for until the request deadline', async () => {
  const config = FossbillingConfigSchema.parse({ url: 'http://fossbilling.test', apiToken: 'token-secret' });
  const backend = createFossbillingBackend(config, {
    call: async (method) => {
      assert.equal(method, 'product/get_list');
      await sleep(CATALOG_DELAY_MS);
      return fossbillingAnswers.page([fossbillingAnswers.hostingProduct]);
    },
  });
  await Promise.all([
    timedOut(backend.listProducts({ requestId: 'r1', deadline: Date.now() + DEADLINE_MS })),
    timedOut(backend.getProduct('1', { requestId: 'r2', deadline: Date.now() + DEADLINE_MS })),
  ]);
});
