/**
 * GET /v1/services lists the same records in the same order on every backend (contract: "every
 * backend must answer the same thing"), and the document says which order. WHMCS's
 * GetClientsProducts sorts by `tblhosting.id` ASC and takes no order parameter (includes/api/
 * getclientsproducts.php, 7.8 and 8.7 decoded: `select_query(..., "tblhosting`.`id", "ASC", ...)`),
 * so oldest first is the only order WHMCS can give; the FOSSBilling mapping sorts the orders it
 * read whole itself and must sort the same way. Oldest first also keeps a walk steady while services
 * are ordered: a new one lands on the last page instead of pushing every record one place down.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { openApiDocument } from '../../src/app.js';
import { backendWith, CTX, CUSTOMER as FOSS_CUSTOMER, FakeCall } from '../mappings/fossbilling/fake-call.js';
import * as foss from '../mappings/fossbilling/fixtures/answers.js';
import { CTX as WHMCS_CTX, CUSTOMER as WHMCS_CUSTOMER, FakeWhmcs } from '../mappings/whmcs/fake-whmcs.js';
import * as whmcsAnswers from '../mappings/whmcs/fixtures/answers.js';

const IDS = ['1', '2', '3', '4', '5'];
const PER_PAGE = 2;

/** Every page of a walk, as the integrator reads them. */
async function walk(read: (page: number) => Promise<{ items: Array<{ id: string }>; total: number }>): Promise<string[][]> {
  const pages: string[][] = [];
  for (let page = 1; page <= Math.ceil(IDS.length / PER_PAGE); page += 1) pages.push((await read(page)).items.map((item) => item.id));
  return pages;
}

t.test('services come in one documented order on WHMCS and FOSSBilling', async (t) => {
  const whmcs = new FakeWhmcs();
  t.teardown(() => whmcs.close());
  // GetClientsProducts as its source answers: by id ascending, LIMIT limitstart, limitnum.
  whmcs
    .answer('GetClientsDetails', whmcsAnswers.clientDetails)
    .answer('GetCancelledPackages', whmcsAnswers.cancelledPackagesEmpty)
    .answer('GetClientsProducts', (params) => {
      const start = Number(params.get('limitstart'));
      const rows = IDS.slice(start, start + Number(params.get('limitnum'))).map((id) => ({ ...whmcsAnswers.service, id, orderid: id }));
      return { ...whmcsAnswers.clientsProducts(rows, IDS.length), startnumber: start };
    });
  const whmcsBackend = whmcs.backend();
  const onWhmcs = await walk((page) => whmcsBackend.listServices(WHMCS_CUSTOMER, { page, perPage: PER_PAGE }, WHMCS_CTX));

  // order/get_list as FOSSBilling's SQL answers it: ORDER BY co.id DESC.
  const rows = [...IDS].reverse().map((id) => ({ ...foss.orderRow, id }));
  const fake = new FakeCall().answer('client/get', foss.client).answer('order/get_list', { pages: 1, page: 1, per_page: 500, total: rows.length, list: rows });
  const fossBackend = backendWith(fake);
  const onFossbilling = await walk((page) => fossBackend.listServices(FOSS_CUSTOMER, { page, perPage: PER_PAGE }, CTX));

  assert.deepEqual(onWhmcs, [['1', '2'], ['3', '4'], ['5']], 'WHMCS: its own order, oldest first');
  assert.deepEqual(onFossbilling, onWhmcs, 'FOSSBilling: the same order as WHMCS');

  const document = openApiDocument({ profile: 'A' }) as { paths: Record<string, { get: { responses: Record<string, { description: string }> } }> };
  assert.match(document.paths['/v1/services']!.get.responses['200']!.description, /oldest first/, 'the order is documented');
});
