/**
 * The breaker's trial call under its request's deadline. The trial kept its own timeout: the request
 * carrying it waited past its deadline (up to a whole read timeout, 15 s for WHMCS), and a write's
 * probe held the write as long. Now the trial ends at its request's deadline like any call; cut
 * there before it could tell anything, it neither closes nor re-opens the breaker: the next call is
 * the trial.
 */
import assert from 'node:assert/strict';
import t, { type Test } from 'tap';
import { BackendError } from '../../src/backend/backend.js';
import { CircuitOpenError } from '../../src/upstream/breaker.js';
import { readAction, writeAction } from '../../src/upstream/policy.js';
import { RequestDeadlineReached } from '../../src/upstream/request-deadline.js';
import { toyProtocol, toyUpstream } from './toy-protocol.js';

type Id = 'ping' | 'down' | 'slow' | 'hang' | 'order';

const actions = {
  ping: readAction<Id>('ping', 5_000),
  down: readAction<Id>('down', 5_000),
  slow: readAction<Id>('slow', 5_000),
  hang: readAction<Id>('hang', 5_000),
  order: writeAction<Id>('order', 5_000),
};

/** `ping` and `order` answered at once, `down` 503 (a down-signal), `slow` after 2.5 s, `hang` never. */
function upstream(t: Test, probe: Id) {
  return toyUpstream(t, toyProtocol<Id>(actions, probe), (request, response) => {
    const ok = () => response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    if (request.url === '/ping' || request.url === '/order') ok();
    else if (request.url === '/down') response.writeHead(503).end();
    else if (request.url === '/slow') setTimeout(ok, 2_500);
  }, { connections: 4, failureThreshold: 1, openMs: 200 });
}

const failed = (work: Promise<unknown>) => work.then((answer) => assert.fail(`answered: ${JSON.stringify(answer)}`), (caught: unknown) => caught);
const uncached = (deadline?: number) => ({ freshness: 'uncached' as const, deadline });

/** Opens the breaker (one 503), then waits out its openMs: the next call is the trial. */
async function halfOpen(client: Awaited<ReturnType<typeof upstream>>) {
  assert.equal(((await failed(client.call('down', {}, uncached()))) as BackendError).kind, 'upstream_error');
  await new Promise((resolve) => setTimeout(resolve, 250));
}

t.test('a trial read ends at its request deadline, not at its own timeout', async (t) => {
  const client = await upstream(t, 'ping');
  await halfOpen(client);
  // The upstream answers 2.5 s in: after this request's deadline (1.2 s), before the call's own (5 s).
  const trial = await client.call('slow', {}, uncached(Date.now() + 1_200)).then(() => 'answered after its deadline', (error: unknown) => error);
  assert.ok(trial instanceof BackendError && trial.kind === 'timeout', `the request is answered at its deadline: ${String(trial)}`);
  assert.deepEqual(await client.call('ping', {}, uncached()), { ok: true }, 'the cut trial did not re-open the breaker: the next call is the trial');
  assert.deepEqual(await client.call('ping', {}, uncached()), { ok: true }, 'its answer closed the breaker');
});

t.test('a trial read cut by its request deadline against a hanging upstream leaves the trial to the next call', async (t) => {
  const client = await upstream(t, 'ping');
  await halfOpen(client);
  const cut = await failed(client.call('hang', {}, uncached(Date.now() + 1_200)));
  assert.ok(cut instanceof BackendError && cut.kind === 'timeout', String(cut));
  const next = await client.call('ping', {}, uncached()).catch((error: unknown) => error);
  assert.deepEqual(next, { ok: true }, `the next call is the trial, not refused: ${String(next)}`);
});

t.test("a write's probe ends at the write's request deadline, and the write is not sent", async (t) => {
  // The probe (`hang`) never answers: it held the write for its own 5 s, then re-opened the breaker.
  const client = await upstream(t, 'hang');
  await halfOpen(client);
  const write = await failed(client.call('order', {}, uncached(Date.now() + 1_200)));
  assert.ok(write instanceof RequestDeadlineReached && write.notRun, `not sent, its key free: ${String(write)}`);
  const next = await client.call('ping', {}, uncached()).catch((error: unknown) => error);
  assert.ok(!(next instanceof CircuitOpenError), 'the cut probe did not re-open the breaker for its openMs');
  assert.deepEqual(next, { ok: true });
});
