/**
 * `cancel` of a service without a billing period must not answer 202 "scheduled".
 *
 * AddCancelRequest only files a row in tblcancelrequests; WHMCS's daily task acts on it (8.7.2
 * vendor/whmcs/whmcs-foundation/lib/Cron/Task/CancellationRequests.php) only for services matching
 * `tblhosting.billingcycle='Free' OR tblhosting.billingcycle='Free Account' OR
 * tblhosting.nextduedate != '0000-00-00'`. A paid one-time service has no next due date
 * (invoicefunctions.php getInvoicePayUntilDate answers "" for "One Time"), so its request is never
 * carried out: a 202 with `effective_on: null` promises a cancellation that never comes.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { CTX, CUSTOMER, FakeWhmcs, rejectsWith } from './fake-whmcs.js';
import * as answers from './fixtures/answers.js';
import { startWhmcsSimulator } from '../../../simulators/whmcs/server.js';
import { whmcsSimulatorConfig } from '../../../simulators/whmcs/sandbox.js';
import { createWhmcsBackend } from '../../../mappings/whmcs/backend.js';
import { WhmcsConfigSchema } from '../../../mappings/whmcs/config.js';

function serving(service: Record<string, unknown>): FakeWhmcs {
  return new FakeWhmcs()
    .answer('GetClientsDetails', answers.clientDetails)
    .answer('GetProducts', answers.catalog)
    .answer('GetClientsProducts', answers.clientsProducts([{ ...answers.service, ...service }]))
    .answer('GetCancelledPackages', answers.cancelledPackagesEmpty)
    .answer('AddCancelRequest', answers.addCancelRequest);
}

t.test('fake WHMCS: a one-time service without a next due date', async (t) => {
  for (const status of ['Active', 'Completed', 'Suspended']) {
    t.test(status, async () => {
      const whmcs = serving({ billingcycle: 'One Time', nextduedate: '0000-00-00', recurringamount: '0.00', status });
      t.teardown(() => whmcs.close());
      await rejectsWith(whmcs.backend().runServiceAction(CUSTOMER, '1', 'cancel', CTX), 'validation');
      assert.equal(whmcs.requests('AddCancelRequest').length, 0, 'nothing filed');
    });
  }

  t.test('still cancellable: recurring, free, and one-time with a due date (unpaid)', async () => {
    for (const service of [{}, { billingcycle: 'Free Account', nextduedate: '0000-00-00' }, { billingcycle: 'One Time', nextduedate: '2024-02-01' }]) {
      const whmcs = serving(service);
      try {
        const result = await whmcs.backend().runServiceAction(CUSTOMER, '1', 'cancel', CTX);
        assert.equal(result.outcome, 'scheduled');
        assert.equal(whmcs.requests('AddCancelRequest').length, 1);
      } finally {
        await whmcs.close();
      }
    }
  });
});

t.test('simulator: the Completed one-time service 7 of client 1', async () => {
  const sim = await startWhmcsSimulator();
  const backend = createWhmcsBackend(WhmcsConfigSchema.parse(whmcsSimulatorConfig(sim)));
  try {
    await rejectsWith(backend.runServiceAction({ accountId: 'acme', upstreamId: '1' }, '7', 'cancel', CTX), 'validation');
    assert.equal(sim.state.cancelRequests.filter((request) => request.relid === 7).length, 0);
  } finally {
    await backend.close();
    await sim.close();
  }
});
