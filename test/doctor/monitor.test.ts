/**
 * The monitor's rules, with a scripted backend and mocked timers: re-runs every intervalMs, which
 * results open and close the gate, and that a run that proves nothing keeps what was known.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { mock } from 'node:test';
import type { Backend, DoctorCheck } from '../../src/backend/backend.js';
import { DoctorMonitor } from '../../src/doctor/monitor.js';

const KEY_CHECK = { id: 'order-key-visible', title: 'key visible', blocks: ['orders'] as const };
const pass: DoctorCheck = { ...KEY_CHECK, status: 'pass', detail: 'shown' };
const fail: DoctorCheck = { ...KEY_CHECK, status: 'fail', detail: 'hidden', fix: 'show it' };
const skip: DoctorCheck = { ...KEY_CHECK, status: 'skip', detail: 'not checked' };

function scripted(results: Array<DoctorCheck[] | Error>) {
  const calls: number[] = [];
  const backend = {
    diagnose: async () => {
      calls.push(calls.length);
      const next = results.shift() ?? [];
      if (next instanceof Error) throw next;
      return next;
    },
  } as unknown as Backend;
  return { backend, calls };
}

const quiet = { error: () => undefined, warn: () => undefined, info: () => undefined };

t.test('doctor monitor', async (t) => {
  t.afterEach(() => mock.timers.reset());

  t.test('runs at start and again every intervalMs', async () => {
    mock.timers.enable({ apis: ['setInterval'] });
    const { backend, calls } = scripted([[pass], [pass], [pass]]);
    const monitor = new DoctorMonitor(backend, { serviceActions: [] }, { intervalMs: 60_000, log: quiet });
    monitor.start();
    assert.equal(calls.length, 1);
    await monitor.run();
    mock.timers.tick(60_000);
    await monitor.run();
    assert.equal(calls.length, 2, 'the tick started the second run; run() joined it');
    monitor.stop();
    mock.timers.tick(120_000);
    assert.equal(calls.length, 2, 'stopped');
  });

  t.test('a failing blocking check closes the gate; a skipped run or a crashed one keeps it closed; a pass opens it', async () => {
    const { backend } = scripted([[fail], [skip], new Error('bug'), [pass]]);
    const monitor = new DoctorMonitor(backend, { serviceActions: [] }, { intervalMs: 0, log: quiet });
    assert.equal(monitor.blockerOf('orders'), undefined, 'open before the first result');
    await monitor.run();
    assert.equal(monitor.blockerOf('orders')?.detail, 'hidden');
    await monitor.run();
    assert.equal(monitor.blockerOf('orders')?.detail, 'hidden', 'a skipped check proves nothing');
    await monitor.run();
    assert.equal(monitor.blockerOf('orders')?.detail, 'hidden', 'a crashed run proves nothing');
    await monitor.run();
    assert.equal(monitor.blockerOf('orders'), undefined);
  });

  t.test('a warning does not close the gate', async () => {
    const { backend } = scripted([[{ ...KEY_CHECK, status: 'warn', detail: 'cannot tell yet' }]]);
    const monitor = new DoctorMonitor(backend, { serviceActions: [] }, { intervalMs: 0, log: quiet });
    await monitor.run();
    assert.equal(monitor.blockerOf('orders'), undefined);
  });
});
