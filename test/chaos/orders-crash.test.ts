/**
 * Chaos: orders are placed at most once, whatever happens to the gateway and whatever the upstream
 * shows. 200 clients, each with its own Idempotency-Key, order at once through a real gateway
 * process (Redis stores, production config) from a slow WHMCS simulator, and retry (following
 * Retry-After) until they get a definitive answer. First, without a crash, every AddOrder outlives
 * the gateway's deadline; then the gateway is killed with SIGKILL while AddOrders are in flight
 * and started again on the same Redis. Both run against a simulator that shows the services'
 * custom fields (where the key tag lives) and against one that hides them, where the gateway
 * cannot prove that an order is absent and must answer 503 outcome_unknown rather than order
 * again. The upstream's own record decides: no key may have two orders (or two AddOrders), and
 * every 201 names the key's one order.
 */
import assert from 'node:assert/strict';
import { setMaxListeners } from 'node:events';
import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { startWhmcsSimulator, type WhmcsSimulator } from '../../simulators/whmcs/server.js';
import { startRedisServer } from '../helpers/redis.js';
import { createChaosGateway, type ChaosGateway } from './gateway-process.js';
import { Ledger, OrderClient, issueAccountKeys, orderSlots, retryUntilDefinitive, type Answer, type OrderSlot } from './orders.js';
import { countBy, describeAnswer, judge } from './verdict.js';

const ORDERS = 200;
/** The gateway's AddOrder deadline; reads get READ_TIMEOUT_MS. Short, so that claims free up quickly. */
const ADD_ORDER_TIMEOUT_MS = 2_000;
const READ_TIMEOUT_MS = 1_500;
/** Enough to send every AddOrder at once: the crash finds them in flight, the deadline is the AddOrder's alone. */
const CONNECTIONS = 256;
/** Upstream AddOrder time with the crash: answered well within the deadline. */
const CRASH_LATENCY_MS = 300;
/**
 * Upstream AddOrder time without a crash: every AddOrder outlives the deadline, by more than a
 * retry takes to come back, and is done before the settle time (when the gateway supports one).
 */
const SLOW_LATENCY_MS = ADD_ORDER_TIMEOUT_MS + 800;
/**
 * `idempotency.settleMs`: longer than the simulator takes to finish an AddOrder, and no shorter than
 * the backend's whole write path (reads, AddOrder, read-back: 7.5 s with these timeouts), which the
 * gateway enforces at boot.
 */
const SETTLE_MS = 8_000;
/**
 * The crash comes when half the AddOrders have reached the upstream: some keys are then sent and
 * in flight, the others claimed or not yet. A count, not a time, so that a loaded machine cannot
 * move the crash to before or after the orders.
 */
const KILL_AT_ADDORDERS = ORDERS / 2;
const KILL_WAIT_LIMIT_MS = 20_000;
/** From the first order (or the restart) to the last retry. */
const RETRY_PHASE_MS = 40_000;
const RETRY_BOUNDS = { maxAttempts: 100, defaultWaitMs: 250, unreachableWaitMs: 1_000, maxWaitMs: 5_000 };
const REPLAY_CONCURRENCY = 50;
const SCENARIO_TIMEOUT_MS = 150_000;

/** One mode's world: its own Redis, simulator and gateway process, shared by its two scenarios. */
interface ChaosWorld {
  simulator: WhmcsSimulator;
  gateway: ChaosGateway;
  accounts: Array<{ accountId: string; apiKey: string }>;
}

type Cleanups = Array<() => Promise<unknown>>;

async function startWorld(cleanups: Cleanups, hidesCustomFields: boolean): Promise<ChaosWorld> {
  // The simulator waits on one shutdown signal per pending call: hundreds at once are expected here.
  setMaxListeners(4 * ORDERS);
  const redis = await startRedisServer();
  cleanups.push(() => redis.stop());
  const simulator = await startWhmcsSimulator();
  cleanups.push(() => simulator.close());
  const accounts = await issueAccountKeys(redis.url);
  const gateway = await createChaosGateway({
    simulator,
    redisUrl: redis.url,
    addOrderTimeoutMs: ADD_ORDER_TIMEOUT_MS,
    readTimeoutMs: READ_TIMEOUT_MS,
    connections: CONNECTIONS,
    settleMs: SETTLE_MS,
  });
  cleanups.push(() => gateway.dispose());
  await gateway.start();
  // Switched on once the gateway is up: a start-up check of the upstream may refuse all orders
  // against a panel that hides the field; these tests are about the orders already under way.
  simulator.quirks.hideServiceCustomFields = hidesCustomFields;
  return { simulator, gateway, accounts };
}

/** Runs `work` over every item, at most `limit` at a time; results in item order. */
async function forEachLimited<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** Waits for the moment to crash, kills the gateway, says what the crash interrupted, and starts it again. */
async function crashAndRestart(gateway: ChaosGateway, ledger: Ledger, client: OrderClient, slots: OrderSlot[], startedAt: number) {
  const limit = startedAt + KILL_WAIT_LIMIT_MS;
  while (ledger.addOrderCalls() < KILL_AT_ADDORDERS && Date.now() < limit) await sleep(5);
  const answered = new Set(slots.filter((slot) => client.answers.get(slot.id)?.some((answer) => answer.status === 201)));
  const sent = ledger.addOrderCallsBySlot();
  const crash = {
    atMs: Date.now() - startedAt,
    addOrdersReceived: ledger.addOrderCalls(),
    ordersAnswered: answered.size,
    /** Keys whose AddOrder had reached the upstream and whose client had no order yet. */
    interrupted: slots.filter((slot) => sent.has(slot.id) && !answered.has(slot)).length,
    restartMs: 0,
  };
  await gateway.kill9();
  const restartedAt = Date.now();
  await gateway.start();
  crash.restartMs = Date.now() - restartedAt;
  return crash;
}

async function runOrders(world: ChaosWorld, crashes: boolean): Promise<void> {
  const { simulator, gateway } = world;
  const hidden = simulator.quirks.hideServiceCustomFields;
  if (!gateway.running()) await gateway.start(); // an earlier scenario may have failed with it down
  const latencyMs = crashes ? CRASH_LATENCY_MS : SLOW_LATENCY_MS;
  simulator.clearFaults();
  simulator.inject({ kind: 'latency', action: 'AddOrder', ms: latencyMs });
  const slots = orderSlots(world.accounts, crashes ? 'kill' : 'slow', ORDERS);
  const ledger = new Ledger(simulator, slots);
  const client = new OrderClient();
  try {
    const startedAt = Date.now();
    // With a crash, the retries' deadline is set once the gateway is back, however long that takes.
    const bounds = { deadline: crashes ? Number.POSITIVE_INFINITY : startedAt + RETRY_PHASE_MS, ...RETRY_BOUNDS };
    const clients = Promise.all(slots.map((slot) => retryUntilDefinitive(client, gateway.base, slot, ledger, hidden, bounds)));
    const crash = crashes ? await crashAndRestart(gateway, ledger, client, slots, startedAt) : undefined;
    if (crash) bounds.deadline = Date.now() + RETRY_PHASE_MS;
    const finals = await clients;
    await sleep(latencyMs + 100); // AddOrders still running upstream land in the ledger
    const ordersMs = Date.now() - startedAt;
    // Every key once more: a replay must give the same answer and place nothing.
    const replays = await forEachLimited(slots, REPLAY_CONCURRENCY, (slot) => client.place(gateway.base, slot));

    const verdict = judge(slots, finals, replays, client, ledger, hidden);
    const firstAnswers = slots.map((slot) => client.answers.get(slot.id)?.[0] as Answer);
    const line = [
      `chaos [${crashes ? 'kill -9' : 'AddOrder timeouts'}, custom fields ${hidden ? 'hidden' : 'shown'}]:`,
      `${ORDERS} keys, ${ledger.addOrderCalls()} AddOrder calls, ${verdict.orders} orders, ${verdict.duplicates} duplicate orders on ${verdict.keysPlacedTwice.length} keys;`,
      crash
        ? `killed after ${crash.atMs} ms with ${crash.addOrdersReceived} AddOrders received, ${crash.ordersAnswered} orders answered, ${crash.interrupted} interrupted; restart ${crash.restartMs} ms;`
        : `first answers: ${countBy(firstAnswers, describeAnswer)};`,
      `final: ${countBy(finals, describeAnswer)}; all answers: ${countBy([...client.answers.values()].flat(), describeAnswer)};`,
      `${Date.now() - startedAt} ms (orders and retries ${ordersMs} ms)`,
    ].join(' ');
    // On stderr: tap's reporter shows what a test file writes there.
    console.error(line);

    if (crash) assert.ok(crash.interrupted > 0, `precondition: the crash must interrupt orders in flight\n${line}`);
    else {
      assert.ok(!firstAnswers.some((answer) => answer.status === 201), `precondition: no AddOrder answers in time\n${line}`);
      assert.ok(
        firstAnswers.some((answer) => answer.status === 504 || answer.reason === 'outcome_unknown'),
        `precondition: AddOrders time out after being sent\n${line}`,
      );
    }
    const context = `\n${line}\ngateway output (tail):\n${gateway.output().slice(-3_000)}`;
    assert.deepEqual(verdict.keysPlacedTwice, [], `keys placed twice upstream${context}`);
    assert.deepEqual(verdict.keysSentTwice, [], `keys with more than one AddOrder${context}`);
    assert.deepEqual(verdict.undecided, [], `keys without a definitive answer${context}`);
    assert.deepEqual(verdict.mismatched, [], `201s that do not name the key's one upstream order${context}`);
    assert.deepEqual(verdict.inconsistentReplays, [], `replays that answer otherwise${context}`);
  } finally {
    await client.close();
  }
}

for (const hidesCustomFields of [false, true]) {
  t.test(`chaos, custom fields ${hidesCustomFields ? 'hidden' : 'shown'}: 200 concurrent orders, every key retried`, async (t) => {
    const cleanups: Cleanups = [];
    let world: ChaosWorld;
    t.before(async () => {
      world = await startWorld(cleanups, hidesCustomFields);
    });
    t.teardown(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
    });

    // The crash comes last: the restarted gateway starts with the simulator already hiding the fields.
    t.test('no crash, every AddOrder outlives the gateway deadline: 0 duplicate orders', { timeout: SCENARIO_TIMEOUT_MS }, async () =>
      runOrders(world, false),
    );
    t.test('kill -9 while AddOrders are in flight, restart on the same Redis: 0 duplicate orders', { timeout: SCENARIO_TIMEOUT_MS }, async () =>
      runOrders(world, true),
    );
  });
}
