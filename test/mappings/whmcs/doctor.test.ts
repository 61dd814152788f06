/**
 * The WHMCS doctor against the simulator: everything passes on a well set-up WHMCS, and each way
 * of setting it up wrong fails its own check with a fix, without anything changed upstream.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import type { DoctorCheck } from '../../../src/backend/backend.js';
import { whmcsSimulatorConfig } from '../../../simulators/whmcs/sandbox.js';
import { PROFILE_ACTIONS } from '../../../src/v1/schemas.js';
import { createWhmcsBackend } from '../../../mappings/whmcs/backend.js';
import { WhmcsConfigSchema } from '../../../mappings/whmcs/config.js';
import { startWhmcsSimulator, type WhmcsSimulator, type WhmcsSimulatorOptions } from '../../../simulators/whmcs/server.js';

/** Every action a Profile A or B gateway calls, plus the custom cancel-revoke action. */
const ALL_ACTIONS = [
  'GetCurrencies',
  'GetClientsDetails',
  'GetProducts',
  'GetOrders',
  'GetClientsProducts',
  'GetInvoices',
  'GetInvoice',
  'GetCancelledPackages',
  'AddOrder',
  'AcceptOrder',
  'ModuleCustom',
  'ModuleSuspend',
  'ModuleUnsuspend',
  'ModuleTerminate',
  'AddCancelRequest',
  'GatewayDeleteCancelRequest',
];

const WRITE_ACTIONS = new Set([
  'addorder',
  'acceptorder',
  'modulecustom',
  'modulesuspend',
  'moduleunsuspend',
  'moduleterminate',
  'addcancelrequest',
  'gatewaydeletecancelrequest',
]);

t.test('WHMCS doctor', async (t) => {
  const simulators: WhmcsSimulator[] = [];
  t.afterEach(async () => {
    await Promise.all(simulators.splice(0).map((simulator) => simulator.close()));
  });

  async function simulator(options: WhmcsSimulatorOptions = {}): Promise<WhmcsSimulator> {
    const started = await startWhmcsSimulator(options);
    simulators.push(started);
    return started;
  }

  async function diagnose(
    sim: WhmcsSimulator,
    overrides: Record<string, unknown> = {},
    profile: 'A' | 'B' = 'A',
  ): Promise<Map<string, DoctorCheck>> {
    const config = WhmcsConfigSchema.parse({ ...whmcsSimulatorConfig(sim), ...overrides });
    const backend = createWhmcsBackend(config);
    try {
      const checks = await backend.diagnose?.({ serviceActions: PROFILE_ACTIONS[profile] });
      assert.ok(checks, 'the WHMCS backend offers diagnose');
      return new Map(checks.map((check) => [check.id, check]));
    } finally {
      await backend.close();
    }
  }

  const statuses = (checks: Map<string, DoctorCheck>) => Object.fromEntries([...checks].map(([id, check]) => [id, check.status]));

  t.test('passes every check against a well set-up WHMCS, and changes nothing there', async () => {
    const sim = await simulator({ allowedActions: ALL_ACTIONS });
    const before = structuredClone(sim.state);
    const checks = await diagnose(sim, { acceptOrder: { enabled: true } });
    assert.deepEqual(statuses(checks), {
      credentials: 'pass',
      'api-role': 'pass',
      'order-key-field': 'pass',
      'order-key-visible': 'pass',
      'cancel-revoke': 'pass',
      'time-zone': 'pass',
    });
    assert.deepEqual(sim.state, before, 'the probes changed nothing upstream');
    // Every write was probed, each with id 0 and nothing that could make it act.
    const writes = sim.calls.filter((call) => WRITE_ACTIONS.has(call.action));
    assert.deepEqual(new Set(writes.map((call) => call.action)), new Set(['addorder', 'acceptorder', 'modulecustom', 'addcancelrequest', 'gatewaydeletecancelrequest']));
    for (const call of writes) {
      const { action, params } = call;
      const id = params.clientid ?? params.orderid ?? params.serviceid;
      assert.equal(id, '0', `${action} probed with id 0`);
      assert.equal(params.pid, undefined, `${action} carries no product`);
    }
  });

  t.test('fails the order-key check with its fix when service answers hide custom fields, and that check stops orders', async () => {
    const sim = await simulator({ quirks: { hideServiceCustomFields: true } });
    const checks = await diagnose(sim);
    const visible = checks.get('order-key-visible');
    assert.equal(visible?.status, 'fail');
    assert.match(visible.detail, /shows no custom fields for service \d+ \(product \d+\)/);
    assert.match(visible.fix ?? '', /GetClientsProducts return each service's "customfields"/);
    assert.deepEqual(visible.blocks, ['orders']);
    assert.equal(checks.get('order-key-field')?.status, 'pass', 'the products themselves are fine');
  });

  t.test('fails the field check naming each public product without the key field, and the product that does not exist', async () => {
    const sim = await simulator();
    sim.state.customFields = sim.state.customFields.filter((field) => !(field.productId === 4 && field.name === 'Gateway Idempotency Key'));
    const checks = await diagnose(sim, { publicProductIds: ['1', '2', '3', '4', '5', '99'] });
    const field = checks.get('order-key-field');
    assert.equal(field?.status, 'fail');
    assert.match(field.detail, /no product 99/);
    assert.match(field.detail, /Product 4 has no custom field "Gateway Idempotency Key"/);
    assert.match(field.fix ?? '', /add a Text field named "Gateway Idempotency Key" to product 4/);
    assert.match(field.fix ?? '', /orderKeyField\.ids/);
    assert.deepEqual(field.blocks, ['orders']);
  });

  t.test('a product mapped to a field id that its services do not show fails the visibility check', async () => {
    const sim = await simulator();
    const checks = await diagnose(sim, { orderKeyField: { ids: { '1': 77 } } });
    const visible = checks.get('order-key-visible');
    assert.equal(visible?.status, 'fail');
    assert.match(visible.detail, /product 1\) shows custom fields, but not "Gateway Idempotency Key" \(field id 77\)/);
  });

  t.test('cannot verify the field before any service of a public product exists: a warning, which stops nothing', async () => {
    const sim = await simulator();
    const publicIds = new Set(whmcsSimulatorConfig(sim).publicProductIds.map(Number));
    sim.state.services = sim.state.services.filter((service) => !publicIds.has(service.pid));
    const visible = (await diagnose(sim)).get('order-key-visible');
    assert.equal(visible?.status, 'warn');
    assert.match(visible.detail, /No service of a public product exists yet/);
  });

  t.test('a service read that fails proves nothing: the visibility check is skipped (a gateway keeps what it knew)', async () => {
    const sim = await simulator();
    sim.inject({ action: 'GetClientsProducts', kind: 'http500' });
    const visible = (await diagnose(sim)).get('order-key-visible');
    assert.equal(visible?.status, 'skip');
    assert.match(visible.detail, /^Not checked: GetClientsProducts failed: .*HTTP 500/);
  });

  t.test('fails the role check naming each action the API role lacks, and where to allow it', async () => {
    const sim = await simulator({ allowedActions: ALL_ACTIONS.filter((action) => action !== 'AddOrder' && action !== 'GetInvoice') });
    const role = (await diagnose(sim)).get('api-role');
    assert.equal(role?.status, 'fail');
    assert.match(role.detail, /^Not allowed: (AddOrder, GetInvoice|GetInvoice, AddOrder)\.$/);
    assert.match(role.fix ?? '', /API Roles/);
    assert.match(role.fix ?? '', /AddOrder \(Orders\)/);
    assert.match(role.fix ?? '', /GetInvoice \(Billing\)/);
  });

  t.test('checks the actions of the profile: Profile B needs the module commands and no cancel-revoke action', async () => {
    const sim = await simulator({ allowedActions: ALL_ACTIONS.filter((action) => action !== 'ModuleSuspend' && action !== 'GatewayDeleteCancelRequest') });
    const profileA = await diagnose(sim, {}, 'A');
    assert.equal(profileA.get('api-role')?.status, 'pass', 'Profile A never suspends');
    assert.equal(profileA.get('cancel-revoke')?.status, 'fail');
    const profileB = await diagnose(sim, {}, 'B');
    assert.match(profileB.get('api-role')?.detail ?? '', /Not allowed: ModuleSuspend\./);
    assert.equal(profileB.has('cancel-revoke'), false);
  });

  t.test('fails the cancel-revoke check with install instructions when WHMCS does not know the action', async () => {
    const sim = await simulator();
    const revoke = (await diagnose(sim, { cancelRevokeAction: 'NoSuchRevokeAction' })).get('cancel-revoke');
    assert.equal(revoke?.status, 'fail');
    assert.match(revoke.detail, /NoSuchRevokeAction is not usable: Invalid API Action/);
    assert.match(revoke.fix ?? '', /Install the custom API action "NoSuchRevokeAction"/);
  });

  t.test('bad credentials fail the first check and nothing else is sent (each failed login counts towards a ban)', async () => {
    const sim = await simulator();
    const checks = await diagnose(sim, { secret: 'wrong-secret' });
    const credentials = checks.get('credentials');
    assert.equal(credentials?.status, 'fail');
    assert.match(credentials.detail, /Authentication Failed/);
    assert.match(credentials.fix ?? '', /WHMCS_SECRET/);
    assert.doesNotMatch(JSON.stringify([...checks.values()]), /wrong-secret/, 'no secret in any result');
    assert.deepEqual(statuses(checks), {
      credentials: 'fail',
      'api-role': 'skip',
      'order-key-field': 'skip',
      'order-key-visible': 'skip',
      'cancel-revoke': 'skip',
      'time-zone': 'pass',
    });
    assert.equal(sim.calls.length, 1);
  });

  t.test('an IP outside the allow-list gets the allow-list or access-key fix', async () => {
    const sim = await simulator({ allowedIps: ['192.0.2.1'] });
    const credentials = (await diagnose(sim)).get('credentials');
    assert.equal(credentials?.status, 'fail');
    assert.match(credentials.detail, /Invalid IP 127\.0\.0\.1/);
    assert.match(credentials.fix ?? '', /API IP Access Restriction/);
    assert.match(credentials.fix ?? '', /WHMCS_ACCESS_KEY/);
  });

  t.test('an unreachable WHMCS fails the credentials check with the URL to check', async () => {
    const sim = await simulator();
    const url = sim.url;
    await sim.close();
    simulators.splice(simulators.indexOf(sim), 1);
    const credentials = (await diagnose(sim, { url })).get('credentials');
    assert.equal(credentials?.status, 'fail');
    assert.match(credentials.fix ?? '', /WHMCS_URL/);
  });

  t.test('fails the time-zone check when upstream.whmcs.timeZone is left unset', async () => {
    const sim = await simulator();
    const { timeZone: _unset, ...upstream } = whmcsSimulatorConfig(sim);
    const config = WhmcsConfigSchema.parse(upstream);
    assert.equal(config.timeZone, 'UTC', 'the mapping still reads UTC');
    const backend = createWhmcsBackend(config);
    const checks = (await backend.diagnose?.({ serviceActions: PROFILE_ACTIONS.A })) ?? [];
    await backend.close();
    const zone = checks.find((check) => check.id === 'time-zone');
    assert.equal(zone?.status, 'fail');
    assert.match(zone.fix ?? '', /upstream\.whmcs\.timeZone/);
    assert.equal(zone.blocks, undefined, 'dates are off, but nothing is unsafe');
  });
});
