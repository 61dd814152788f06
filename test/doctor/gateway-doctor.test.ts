/**
 * The doctor inside the gateway: its checks run at start-up without holding it up, each failing
 * check is logged with its fix, and while an order-key check fails POST /v1/orders answers 503
 * backend_misconfigured with nothing sent upstream, until a re-run passes.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { startWhmcsSimulator } from '../../simulators/whmcs/server.js';
import { bearer, buildTestGateway, type TestGateway } from '../helpers/gateway.js';

const ORDER = { product_id: '1', billing_cycle: 'monthly' };

function order(gw: TestGateway, key: string) {
  return gw.app.inject({
    method: 'POST',
    url: '/v1/orders',
    headers: { ...bearer(gw.keys['acme:all']), 'content-type': 'application/json', 'idempotency-key': key },
    payload: JSON.stringify(ORDER),
  });
}

function logLines(gw: TestGateway): Array<Record<string, unknown>> {
  return gw.logs.map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** pino levels: 40 warn, 50 error. */
const doctorLines = (gw: TestGateway, level: number) =>
  logLines(gw).filter((line) => line.component === 'doctor' && line.level === level);

t.test('doctor in the gateway', async (t) => {
  let gw: TestGateway | undefined;
  t.afterEach(async () => {
    await gw?.close();
    gw = undefined;
  });

  async function gateway(
    options: { hideCustomFields?: boolean; intervalMs?: number; enabled?: boolean; whmcs?: Record<string, unknown> } = {},
  ): Promise<TestGateway> {
    const simulator = await startWhmcsSimulator({ quirks: { hideServiceCustomFields: options.hideCustomFields ?? false } });
    const built = await buildTestGateway({
      simulator,
      config: { doctor: { enabled: options.enabled ?? true, intervalMs: options.intervalMs ?? 0 } },
      ...(options.whmcs ? { whmcs: options.whmcs } : {}),
    });
    const close = built.close.bind(built);
    built.close = async () => {
      await close();
      await simulator.close();
    };
    gw = built;
    return built;
  }

  t.test('refuses orders with 503 backend_misconfigured while service answers hide the key, sending nothing; orders again once a re-run passes', async () => {
    const g = await gateway({ hideCustomFields: true });
    // Joins the run started when the app became ready.
    await g.app.doctor.run();

    const callsBefore = g.simulator.calls.length;
    const refused = await order(g, 'doctor-key-1');
    assert.equal(refused.statusCode, 503, refused.body);
    const problem = refused.json();
    assert.equal(problem.reason, 'backend_misconfigured');
    assert.match(problem.detail, /Ordering is temporarily unavailable/);
    assert.doesNotMatch(problem.detail, /customfields|GetClientsProducts/, 'the operator\'s details stay in the log');
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    assert.equal(g.simulator.calls.length, callsBefore, 'nothing was sent upstream');
    const refusalLog = logLines(g).find((line) => line.reason === 'backend_misconfigured');
    assert.match(String(refusalLog?.upstream), /doctor check "order-key-visible" fails/);

    // The operator fixes WHMCS; the next run (here: called at once) lifts the refusal.
    g.simulator.quirks.hideServiceCustomFields = false;
    const checks = await g.app.doctor.run();
    assert.ok(checks.every((check) => check.status === 'pass'), JSON.stringify(checks));
    const placed = await order(g, 'doctor-key-1');
    assert.equal(placed.statusCode, 201, placed.body);
    assert.equal(g.simulator.calls.filter((call) => call.action === 'addorder' && call.params.clientid === '1').length, 1);
  });

  t.test('logs each failing check once per run at error level, with its fix', async () => {
    const g = await gateway({ hideCustomFields: true });
    await g.app.doctor.run();
    const errors = doctorLines(g, 50);
    assert.equal(errors.length, 1, JSON.stringify(errors));
    const [line] = errors;
    assert.equal(line?.check, 'order-key-visible');
    assert.match(String(line?.msg), /FAIL .*Fix: Make GetClientsProducts return/);
    assert.match(String(line?.msg), /POST \/v1\/orders answers 503 backend_misconfigured/);
    assert.equal(typeof line?.fix, 'string');
  });

  t.test('does not hold up start-up or requests: both go on while the first run waits on WHMCS', async () => {
    const simulator = await startWhmcsSimulator();
    // The doctor's first call never gets an answer.
    simulator.inject({ action: 'GetCurrencies', kind: 'hang', times: 1 });
    const built = await buildTestGateway({ simulator, config: { doctor: { enabled: true, intervalMs: 0 } } });
    gw = built;
    const close = built.close.bind(built);
    built.close = async () => {
      await close();
      await simulator.close();
    };
    const me = await built.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(built.keys['acme:all']) });
    assert.equal(me.statusCode, 200);
    const state = await Promise.race([built.app.doctor.run().then(() => 'finished'), Promise.resolve('running')]);
    assert.equal(state, 'running', 'the app was ready and answered while the checks were still running');
  });

  t.test('other failing checks are logged but do not stop orders', async () => {
    const g = await gateway({ whmcs: { timeZone: undefined } });
    // Without the time zone set, dates are off, but ordering is safe.
    await g.app.doctor.run();
    assert.equal(doctorLines(g, 50)[0]?.check, 'time-zone');
    const placed = await order(g, 'doctor-key-2');
    assert.equal(placed.statusCode, 201, placed.body);
  });

  t.test('with doctor.enabled false nothing runs', async () => {
    const g = await gateway({ hideCustomFields: true, enabled: false });
    const placed = await order(g, 'doctor-key-3');
    assert.equal(placed.statusCode, 201, placed.body);
    assert.equal(doctorLines(g, 50).length, 0);
  });

  t.test('documents backend_misconfigured (503, with Retry-After) for POST /v1/orders', async () => {
    const g = await gateway({ enabled: false });
    const document = (await g.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json();
    const unavailable = document.paths['/v1/orders'].post.responses['503'];
    assert.match(unavailable.description, /`backend_misconfigured`/);
    assert.ok(unavailable.headers['Retry-After']);
  });
});
