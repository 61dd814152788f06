import assert from 'node:assert/strict';
import t from 'tap';
import { ActionResultSchema } from '../../../src/v1/schemas.js';
import { CTX, CUSTOMER, FakeWhmcs, OTHER_CUSTOMER, rejectsWith } from './fake-whmcs.js';
import * as answers from './fixtures/answers.js';

const WRITES = ['ModuleCustom', 'ModuleSuspend', 'ModuleUnsuspend', 'ModuleTerminate', 'AddCancelRequest', 'GatewayDeleteCancelRequest'];

interface ServiceScenario {
  status?: string;
  pid?: string;
  cancellationPending?: boolean;
}

/**
 * Client 1 owns service 1 in the given state; the module actions change that state as WHMCS
 * would, and cancellation requests come and go with AddCancelRequest and the revoke action.
 */
function serve(whmcs: FakeWhmcs, scenario: ServiceScenario = {}) {
  const state = { status: scenario.status ?? 'Active', cancellationPending: scenario.cancellationPending ?? false };
  const succeed = (status?: string) => () => {
    if (status) state.status = status;
    return answers.moduleSuccess;
  };
  whmcs
    .answer('GetClientsDetails', answers.clientDetails)
    .answer('GetProducts', answers.catalog)
    .answer('GetClientsProducts', (params) =>
      params.get('clientid') === '1'
        ? answers.clientsProducts([{ ...answers.service, pid: scenario.pid ?? '1', status: state.status }])
        : answers.clientsProductsEmpty,
    )
    .answer('GetCancelledPackages', () => (state.cancellationPending ? answers.cancelledPackages : answers.cancelledPackagesEmpty))
    .answer('ModuleCustom', succeed())
    .answer('ModuleSuspend', succeed('Suspended'))
    .answer('ModuleUnsuspend', succeed('Active'))
    .answer('ModuleTerminate', succeed('Terminated'))
    .answer('AddCancelRequest', () => {
      state.cancellationPending = true;
      return answers.addCancelRequest;
    })
    .answer('GatewayDeleteCancelRequest', () => {
      state.cancellationPending = false;
      return { result: 'success' };
    });
  return state;
}

const writesSent = (whmcs: FakeWhmcs) => whmcs.actions().filter((action) => WRITES.includes(action));

t.test('WHMCS backend: service actions', async (t) => {
  let whmcs: FakeWhmcs;
  t.beforeEach(() => {
    whmcs = new FakeWhmcs();
  });
  t.afterEach(() => whmcs.close());

  t.test('start runs the module’s allow-listed function and returns the service as it now stands', async () => {
    serve(whmcs);
    const result = await whmcs.backend().runServiceAction(CUSTOMER, '1', 'start', CTX);
    ActionResultSchema.parse(result);
    assert.equal(result.action, 'start');
    assert.equal(result.outcome, 'completed');
    assert.equal(result.effective_on, null);
    assert.equal(result.service.id, '1');
    const sent = whmcs.requests('ModuleCustom')[0];
    assert.equal(sent?.get('serviceid'), '1');
    assert.equal(sent?.get('func_name'), 'start');
    assert.equal(whmcs.requests('GetClientsProducts').length, 2, 'ownership check before, fresh read after');
    assert.equal(whmcs.requests('GetClientsProducts')[0]?.get('clientid'), '1');
  });

  t.test('finds the module through the product even when the product is hidden', async () => {
    serve(whmcs, { pid: '9' });
    await whmcs.backend().runServiceAction(CUSTOMER, '1', 'stop', CTX);
    assert.equal(whmcs.requests('ModuleCustom')[0]?.get('func_name'), 'shutdown', 'solusvmpro stop');
  });

  t.test('a function outside the allow-list is refused without any upstream write', async () => {
    serve(whmcs);
    const error = await rejectsWith(whmcs.backend().runServiceAction(CUSTOMER, '1', 'reinstall', CTX), 'validation');
    assert.match(error.detail, /"reinstall" is not supported/);
    const unknownModule = await rejectsWith(
      whmcs.backend({ moduleFunctions: { solusvmpro: { start: 'boot' } } }).runServiceAction(CUSTOMER, '1', 'start', CTX),
      'validation',
    );
    assert.match(unknownModule.detail, /not supported/);
    assert.deepEqual(writesSent(whmcs), []);
  });

  t.test('a product without a module cannot be suspended', async () => {
    serve(whmcs, { pid: '3' });
    await rejectsWith(whmcs.backend().runServiceAction(CUSTOMER, '1', 'suspend', CTX), 'validation');
    assert.deepEqual(writesSent(whmcs), []);
  });

  const conflicts: Array<[ServiceScenario, Parameters<ReturnType<FakeWhmcs['backend']>['runServiceAction']>[2]]> = [
    [{ status: 'Suspended' }, 'start'],
    [{ status: 'Pending' }, 'reboot'],
    [{ status: 'Suspended' }, 'suspend'],
    [{ status: 'Active' }, 'unsuspend'],
    [{ status: 'Terminated' }, 'terminate'],
    [{ status: 'Cancelled' }, 'cancel'],
    [{ status: 'Active', cancellationPending: true }, 'cancel'],
    [{ status: 'Active' }, 'cancel_revoke'],
  ];
  for (const [scenario, action] of conflicts) {
    t.test(`${action} when the service is ${scenario.status}${scenario.cancellationPending ? ' with a cancellation pending' : ''}: a conflict, decided before any write`, async () => {
      serve(whmcs, scenario);
      await rejectsWith(whmcs.backend().runServiceAction(CUSTOMER, '1', action, CTX), 'conflict');
      assert.deepEqual(writesSent(whmcs), []);
    });
  }

  t.test('suspend, unsuspend, terminate call their module commands', async () => {
    const state = serve(whmcs);
    const backend = whmcs.backend();
    assert.equal((await backend.runServiceAction(CUSTOMER, '1', 'suspend', CTX)).service.status, 'suspended');
    assert.equal((await backend.runServiceAction(CUSTOMER, '1', 'unsuspend', CTX)).service.status, 'active');
    assert.equal((await backend.runServiceAction(CUSTOMER, '1', 'terminate', CTX)).service.status, 'terminated');
    assert.equal(state.status, 'Terminated');
    assert.deepEqual(writesSent(whmcs), ['ModuleSuspend', 'ModuleUnsuspend', 'ModuleTerminate']);
    assert.ok(whmcs.requests('ModuleSuspend').every((params) => params.get('serviceid') === '1'));
  });

  t.test('cancel files an end-of-period request: scheduled, effective on the next due date', async () => {
    serve(whmcs);
    const result = await whmcs.backend().runServiceAction(CUSTOMER, '1', 'cancel', CTX);
    assert.equal(result.outcome, 'scheduled');
    assert.equal(result.effective_on, '2024-02-01');
    assert.equal(result.service.cancellation_requested, true, 'the cached request list was dropped');
    const sent = whmcs.requests('AddCancelRequest')[0];
    assert.equal(sent?.get('serviceid'), '1');
    assert.equal(sent?.get('type'), 'End of Billing Period');
    assert.equal(sent?.get('reason'), 'Cancelled through the reseller API');
  });

  t.test('cancel_revoke calls the configured custom action', async () => {
    serve(whmcs, { cancellationPending: true });
    const result = await whmcs.backend().runServiceAction(CUSTOMER, '1', 'cancel_revoke', CTX);
    assert.equal(result.outcome, 'completed');
    assert.equal(result.service.cancellation_requested, false);
    assert.equal(whmcs.requests('GatewayDeleteCancelRequest')[0]?.get('serviceid'), '1');
  });

  t.test('another client’s service is not found and nothing is written', async () => {
    serve(whmcs);
    await rejectsWith(whmcs.backend().runServiceAction(OTHER_CUSTOMER, '1', 'terminate', CTX), 'not_found');
    assert.equal(whmcs.requests('GetClientsProducts')[0]?.get('clientid'), '2');
    assert.deepEqual(writesSent(whmcs), []);
  });

  t.test('an action is planned on the cancellations WHMCS has now, not on what another worker cached', async () => {
    serve(whmcs);
    // Two gateway workers: each process has its own cache of GetCancelledPackages.
    const [workerA, workerB] = [whmcs.backend(), whmcs.backend()];
    assert.equal((await workerB.getService(CUSTOMER, '1', CTX)).cancellation_requested, false, 'B caches "none pending"');
    await workerA.runServiceAction(CUSTOMER, '1', 'cancel', CTX);
    const revoked = await workerB.runServiceAction(CUSTOMER, '1', 'cancel_revoke', CTX);
    assert.equal(revoked.outcome, 'completed');
    assert.equal(whmcs.requests('GatewayDeleteCancelRequest').length, 1);
    // A's cache (from its read-back) still says pending: WHMCS decides, a revoke is refused and a cancel goes through.
    await rejectsWith(workerA.runServiceAction(CUSTOMER, '1', 'cancel_revoke', CTX), 'conflict');
    assert.equal((await workerA.runServiceAction(CUSTOMER, '1', 'cancel', CTX)).outcome, 'scheduled');
    assert.deepEqual(writesSent(whmcs), ['AddCancelRequest', 'GatewayDeleteCancelRequest', 'AddCancelRequest']);
    await Promise.all([workerA.close(), workerB.close()]);
  });
});

t.test('WHMCS backend: service action failures', async (t) => {
  let whmcs: FakeWhmcs;
  t.beforeEach(() => {
    whmcs = new FakeWhmcs();
  });
  t.afterEach(() => whmcs.close());

  /** The first answer to `action` replaces the scenario's. */
  function failing(action: string, answer: object | string, options: { delayMs?: number } = {}) {
    whmcs.answer(action, answer, { times: 1, ...options });
    serve(whmcs);
  }

  t.test('Existing Cancellation Request Exists is a conflict', async () => {
    failing('AddCancelRequest', answers.addCancelRequestExists);
    await rejectsWith(whmcs.backend().runServiceAction(CUSTOMER, '1', 'cancel', CTX), 'conflict');
  });

  t.test('Service ID not found is not found', async () => {
    failing('ModuleSuspend', { result: 'error', message: 'Service ID not found' });
    await rejectsWith(whmcs.backend().runServiceAction(CUSTOMER, '1', 'suspend', CTX), 'not_found');
  });

  t.test('Service not assigned to a module is a validation error', async () => {
    failing('ModuleTerminate', answers.moduleNotAssigned);
    await rejectsWith(whmcs.backend().runServiceAction(CUSTOMER, '1', 'terminate', CTX), 'validation');
  });

  t.test('a missing module function is the operator’s allow-list mistake', async () => {
    failing('ModuleCustom', { result: 'error', message: '!Function not found in module!' });
    const error = await rejectsWith(whmcs.backend().runServiceAction(CUSTOMER, '1', 'reboot', CTX), 'upstream_error');
    assert.match(error.operatorMessage ?? '', /moduleFunctions allows "reboot"/);
  });

  t.test('a module’s own error text goes to the operator, never to the client', async () => {
    failing('ModuleCustom', { result: 'error', message: 'Virtualizor: VPS 104 is locked (node hv3.internal)' });
    const error = await rejectsWith(whmcs.backend().runServiceAction(CUSTOMER, '1', 'start', CTX), 'upstream_error');
    assert.match(error.operatorMessage ?? '', /VPS 104 is locked/);
    assert.ok(!error.detail.includes('Virtualizor'));
    assert.equal(error.outcomeUnknown, false);
  });

  t.test('a revoke action that is not installed tells the operator to install it', async () => {
    whmcs.answer('GatewayDeleteCancelRequest', { result: 'error', message: 'Invalid API Action: "gatewaydeletecancelrequest" is not a valid API action' }, { times: 1 });
    serve(whmcs, { cancellationPending: true });
    const error = await rejectsWith(whmcs.backend().runServiceAction(CUSTOMER, '1', 'cancel_revoke', CTX), 'upstream_error');
    assert.match(error.operatorMessage ?? '', /install the custom WHMCS API action "GatewayDeleteCancelRequest"/);
  });

  t.test('a module call that times out leaves the outcome unknown and is not retried', async () => {
    failing('ModuleCustom', answers.moduleSuccess, { delayMs: 300 });
    const error = await rejectsWith(
      whmcs.backend({ actionTimeoutsMs: { ModuleCustom: 30 } }).runServiceAction(CUSTOMER, '1', 'reboot', CTX),
      'timeout',
    );
    assert.equal(error.outcomeUnknown, true);
    assert.equal(whmcs.requests('ModuleCustom').length, 1);
  });

  t.test('a failure to read the service back after a successful action keeps the outcome unknown', async () => {
    const broken = new FakeWhmcs();
    try {
      broken.answer('GetClientsProducts', answers.clientsProducts([answers.service]), { times: 1 }).answer('GetClientsProducts', '<html>oops</html>');
      serve(broken);
      const error = await rejectsWith(broken.backend().runServiceAction(CUSTOMER, '1', 'reboot', CTX), 'upstream_error');
      assert.equal(error.outcomeUnknown, true);
      assert.equal(broken.requests('ModuleCustom').length, 1);
    } finally {
      await broken.close();
    }
  });
});
