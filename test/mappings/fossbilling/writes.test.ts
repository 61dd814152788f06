import assert from 'node:assert/strict';
import t from 'tap';
import { BackendError } from '../../../src/backend/backend.js';
import { ActionResultSchema, type ServiceAction } from '../../../src/v1/schemas.js';
import { FossbillingConfigSchema } from '../../../mappings/fossbilling/config.js';
import { declareMethods } from '../../../mappings/fossbilling/methods.js';
import { FOSSBILLING_ACTIONS } from '../../../mappings/fossbilling/service-actions.js';
import { backendWith, CTX, CUSTOMER, FakeCall, keyed, rejectsWith } from './fake-call.js';
import * as answers from './fixtures/answers.js';

const KEYED = keyed('key-123');

function ordering(): FakeCall {
  return new FakeCall()
    .answer('client/get', answers.client)
    .answer('product/get_list', answers.page([answers.hostingProduct, answers.onceProduct]))
    .answer('order/create', 7)
    .answer('order/get', answers.order)
    .answer('invoice/get_list', answers.page([answers.invoice]));
}

t.test('FOSSBilling orders', async (t) => {
  t.test('places an order with client, product, period, config and the key in the order meta', async () => {
    const fake = ordering();
    const order = await backendWith(fake).placeOrder(CUSTOMER, { product_id: '1', billing_cycle: 'annually', hostname: 'site7.example.com' }, KEYED);
    assert.equal(order.id, '7');
    const create = fake.calls.find((entry) => entry.method === 'order/create');
    assert.deepEqual(create?.params, {
      client_id: '1',
      product_id: '1',
      period: '1Y',
      config: { hostname: 'site7.example.com', domain: { action: 'owndomain', owndomain_sld: 'site7', owndomain_tld: '.example.com' } },
      meta: { gateway_idempotency_key: 'acct_1:key-123:rec-1' },
      activate: false,
      invoice_option: 'issue-invoice',
    });
    const declared = declareMethods(FossbillingConfigSchema.parse({ url: 'http://fossbilling.test', apiToken: 'x-token' }))['order/create'];
    assert.deepEqual([declared.safety, declared.retry, declared.coalesce], ['write', false, false]);
  });

  t.test('sends no period for a one-time product', async () => {
    const fake = ordering();
    await backendWith(fake).placeOrder(CUSTOMER, { product_id: '2', billing_cycle: 'onetime' }, KEYED);
    assert.equal('period' in (fake.calls.find((entry) => entry.method === 'order/create')?.params ?? {}), false);
  });

  t.test('refuses before sending: unknown product, cycle not offered, config options, closed account', async () => {
    const cases: Array<[FakeCall, Parameters<ReturnType<typeof backendWith>['placeOrder']>[1], RegExp]> = [
      [ordering(), { product_id: '9', billing_cycle: 'monthly' }, /product_id/],
      [ordering(), { product_id: '1', billing_cycle: 'quarterly' }, /billing_cycle.*offered: monthly, annually/],
      [ordering(), { product_id: '1', billing_cycle: 'monthly', config_options: { '3': 1 } }, /config_options\.3/],
      [ordering().answer('client/get', { ...answers.client, status: 'canceled' }), { product_id: '1', billing_cycle: 'monthly' }, /closed/],
    ];
    for (const [fake, input, detail] of cases) {
      await rejectsWith(backendWith(fake).placeOrder(CUSTOMER, input, KEYED), 'validation', detail);
      assert.equal(fake.methods().includes('order/create'), false);
    }
  });

  t.test('maps order/create refusals by code (831 out of stock)', async () => {
    const fake = ordering().answer('order/create', FakeCall.error('Product 1 is out of stock.', 831));
    await rejectsWith(backendWith(fake).placeOrder(CUSTOMER, { product_id: '1', billing_cycle: 'monthly', hostname: 'site7.example.com' }, KEYED), 'validation', /out of stock/);
  });

  t.test('flags a read-back failure after order/create as an unknown outcome', async () => {
    const fake = ordering().answer('order/get', new BackendError('timeout', 'The billing system did not answer in time.'));
    const error = await rejectsWith(backendWith(fake).placeOrder(CUSTOMER, { product_id: '1', billing_cycle: 'monthly', hostname: 'site7.example.com' }, KEYED), 'timeout');
    assert.equal(error.outcomeUnknown, true);
  });

  t.test('refuses an order/create answer that is not an id as an unknown outcome', async () => {
    const fake = ordering().answer('order/create', { id: 7 });
    const error = await rejectsWith(backendWith(fake).placeOrder(CUSTOMER, { product_id: '1', billing_cycle: 'monthly', hostname: 'site7.example.com' }, KEYED), 'upstream_error');
    assert.equal(error.outcomeUnknown, true);
  });

  t.test('finds an earlier order by its key in the meta, matching exactly (the upstream matches a prefix)', async () => {
    const prefixOnly = { ...answers.orderRow, id: '9', meta: { gateway_idempotency_key: 'acct_1:key-123:rec-10' } };
    const fake = ordering().answer('order/get_list', answers.page([prefixOnly, answers.orderRow]));
    const found = await backendWith(fake).findOrderByIdempotencyKey(CUSTOMER, KEYED);
    assert.equal(found.kind === 'found' && found.order.id, '7');
    const search = fake.calls.find((entry) => entry.method === 'order/get_list');
    assert.deepEqual(search?.params, { client_id: '1', meta: { gateway_idempotency_key: 'acct_1:key-123:rec-1' }, page: 1, per_page: 20 });
  });

  t.test('proves absence only when the search answered whole, and ignores other accounts\' tags and other uses of the key', async () => {
    const otherAccount = { ...answers.orderRow, meta: { gateway_idempotency_key: 'acct_9:key-123:rec-1' } };
    const earlierUse = { ...answers.orderRow, id: '8', meta: { gateway_idempotency_key: 'acct_1:key-123:rec-0' } };
    const fake = ordering().answer('order/get_list', answers.page([otherAccount, earlierUse]));
    assert.deepEqual(await backendWith(fake).findOrderByIdempotencyKey(CUSTOMER, KEYED), { kind: 'absent' });
    const none = ordering().answer('order/get_list', answers.page([]));
    assert.deepEqual(await backendWith(none).findOrderByIdempotencyKey(CUSTOMER, KEYED), { kind: 'absent' });
  });

  t.test('cannot tell (never "absent") when the search fails, spans pages, or its rows hide their meta', async () => {
    const failing = ordering().answer('order/get_list', new BackendError('timeout', 'The billing system did not answer in time.'));
    assert.equal((await backendWith(failing).findOrderByIdempotencyKey(CUSTOMER, KEYED)).kind, 'unknown');
    const { meta: _hidden, ...withoutMeta } = { ...answers.orderRow, id: '9' };
    const hidden = ordering().answer('order/get_list', answers.page([withoutMeta]));
    assert.equal((await backendWith(hidden).findOrderByIdempotencyKey(CUSTOMER, KEYED)).kind, 'unknown');
    const more = ordering().answer('order/get_list', { ...answers.page([]), total: 21 });
    assert.equal((await backendWith(more).findOrderByIdempotencyKey(CUSTOMER, KEYED)).kind, 'unknown');
  });

  t.test('marks the write-ahead record right before order/create, and sends nothing when that fails', async () => {
    const steps: string[] = [];
    const fake = ordering();
    const ctx = { ...KEYED, beforeWrite: async () => void steps.push(`mark after ${fake.calls.length} calls`) };
    await backendWith(fake).placeOrder(CUSTOMER, { product_id: '1', billing_cycle: 'monthly', hostname: 'site7.example.com' }, ctx);
    const createdAt = fake.calls.findIndex((entry) => entry.method === 'order/create');
    assert.deepEqual(steps, [`mark after ${createdAt} calls`]);
    const refusing = ordering();
    const lost = { ...KEYED, beforeWrite: async () => Promise.reject(new Error('lease lost')) };
    await assert.rejects(backendWith(refusing).placeOrder(CUSTOMER, { product_id: '1', billing_cycle: 'monthly', hostname: 'site7.example.com' }, lost), /lease lost/);
    assert.equal(refusing.calls.filter((entry) => entry.method === 'order/create').length, 0);
  });
});

t.test('FOSSBilling service actions', async (t) => {
  function serving(status: string): { fake: FakeCall; state: { status: string } } {
    const state = { status };
    const set = (next: string) => () => {
      state.status = next;
      return true;
    };
    const fake = new FakeCall()
      .answer('client/get', answers.client)
      .answer('order/get', () => ({ ...answers.order, status: state.status, canceled_at: state.status === 'canceled' ? '2026-06-01 09:30:00' : null }))
      .answer('order/suspend', set('suspended'))
      .answer('order/unsuspend', set('active'))
      .answer('order/cancel', set('canceled'));
    return { fake, state };
  }

  const RUNS: Array<[ServiceAction, string, string, string]> = [
    ['suspend', 'active', 'order/suspend', 'suspended'],
    ['unsuspend', 'suspended', 'order/unsuspend', 'active'],
    ['cancel', 'active', 'order/cancel', 'cancelled'],
    ['cancel', 'failed_renew', 'order/cancel', 'cancelled'],
  ];

  for (const [action, from, method, after] of RUNS) {
    t.test(`${action} from ${from} calls ${method}`, async () => {
      const { fake } = serving(from);
      const result = ActionResultSchema.parse(await backendWith(fake).runServiceAction(CUSTOMER, '7', action, CTX));
      assert.equal(result.outcome, 'completed');
      assert.equal(result.service.status, after);
      assert.equal(fake.calls.find((entry) => entry.method === method)?.params.id, '7');
    });
  }

  t.test('declares which actions it supports per profile', async () => {
    assert.deepEqual(FOSSBILLING_ACTIONS, { A: ['cancel'], B: ['suspend', 'unsuspend'] });
  });

  for (const action of ['start', 'stop', 'reboot', 'reinstall', 'terminate', 'cancel_revoke'] as const) {
    t.test(`refuses ${action}, naming what this backend supports`, async () => {
      const { fake } = serving('active');
      await rejectsWith(backendWith(fake).runServiceAction(CUSTOMER, '7', action, CTX), 'validation', /supports: cancel, suspend, unsuspend/);
      assert.deepEqual(fake.methods().filter((method) => !method.endsWith('/get')), []);
    });
  }

  const REFUSED: Array<[ServiceAction, string]> = [
    ['suspend', 'suspended'],
    ['unsuspend', 'active'],
    ['cancel', 'canceled'],
    ['cancel', 'pending_setup'],
  ];
  for (const [action, status] of REFUSED) {
    t.test(`refuses ${action} while ${status} without sending it`, async () => {
      const { fake } = serving(status);
      await rejectsWith(backendWith(fake).runServiceAction(CUSTOMER, '7', action, CTX), 'conflict');
      assert.equal(fake.calls.length, 1);
    });
  }

  t.test('maps FOSSBilling\'s own state refusal to a conflict', async () => {
    const { fake } = serving('active');
    fake.answer('order/suspend', FakeCall.error(answers.messages.onlyActiveSuspend));
    await rejectsWith(backendWith(fake).runServiceAction(CUSTOMER, '7', 'suspend', CTX), 'conflict');
  });

  t.test('never acts on another client\'s order', async () => {
    const { fake } = serving('active');
    fake.answer('order/get', { ...answers.order, client_id: 2 });
    await rejectsWith(backendWith(fake).runServiceAction(CUSTOMER, '7', 'suspend', CTX), 'not_found');
    assert.deepEqual(fake.methods(), ['order/get']);
  });
});
