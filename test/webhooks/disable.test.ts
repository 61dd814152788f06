/**
 * Auto-disable (reference W9): an endpoint that answers 410, or whose deliveries have all failed for
 * `disableAfterMs`, is disabled with its reason recorded (the reseller reads it on GET /v1/webhooks)
 * and the operator told (the metric, the log line); its event is dropped, not retried.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import pino from 'pino';
import type { WebhookDisabledReason } from '../../src/stores/webhook-types.js';
import { firstAttempts, LIVE_ACCOUNTS } from '../helpers/worker-harness.js';

const NOW = Date.parse('2026-03-10T12:00:00.000Z');
const DAY = 86_400_000;

t.test('an endpoint is disabled for answering 410 or for failing too long, never for one failure', async (t) => {
  /** Since when each path's deliveries have been failing (absent: they were not). */
  const failingSince: Record<string, number> = { '/failing': NOW - 6 * DAY, '/failing-briefly': NOW - 4 * DAY };
  const disabled: WebhookDisabledReason[] = [];
  const logs: string[] = [];
  const { store, port, entries } = await firstAttempts(t, { '/gone': [410], '/failing': [500], '/failing-briefly': [500], '/failing-now': [500] }, {
    now: NOW,
    settings: { disableAfterMs: 5 * DAY },
    record: (path, record) => ({ ...record, failingSince: path in failingSince ? new Date(failingSince[path] as number).toISOString() : null }),
    worker: { onDisabled: (reason) => disabled.push(reason), log: pino({ level: 'info' }, { write: (line: string) => void logs.push(line) }) },
  });

  const states = Object.fromEntries(Object.entries(entries).map(([path, entry]) => [path, entry.state]));
  assert.deepEqual(states, { '/gone': 'dropped', '/failing': 'dropped', '/failing-briefly': 'pending', '/failing-now': 'pending' });
  const status = async (path: string) => {
    const record = await store.get(path);
    return record && [record.status, record.disabledReason];
  };
  assert.deepEqual(await status('/gone'), ['disabled', 'gone']);
  assert.deepEqual(await status('/failing'), ['disabled', 'failing']);
  assert.deepEqual(await status('/failing-briefly'), ['enabled', null]);
  assert.deepEqual(await status('/failing-now'), ['enabled', null]);
  assert.deepEqual(disabled.sort(), ['failing', 'gone'], 'the operator is told of each, with its reason');
  const warned = logs.map((line) => JSON.parse(line)).filter((line) => line.msg === 'webhook endpoint disabled');
  assert.deepEqual(warned.map((line) => line.reason).sort(), ['failing', 'gone']);
  assert.ok(warned.every((line) => line.level === 40 && line.url_host === `127.0.0.1:${port}`));

  // Enabling it again (the admin API's enable) clears the reason; PUT /v1/webhooks sets a new record, without one.
  assert.deepEqual(await store.enable('/gone', new Date().toISOString()).then((record) => record && [record.status, record.disabledReason]), ['enabled', null]);
});

t.test('a disabled account\'s events are dropped unsent, its endpoint left enabled', async (t) => {
  const off = { id: '/off', name: 'Off', upstreamId: '9', createdAt: new Date(NOW - DAY).toISOString(), disabledAt: new Date(NOW - 1000).toISOString() };
  const received: string[] = [];
  const { store, entries } = await firstAttempts(t, { '/off': [200], '/on': [200] }, {
    now: NOW,
    worker: {
      accounts: { getAccount: async (id) => (id === off.id ? off : LIVE_ACCOUNTS.getAccount(id)) },
      onAttempt: (outcome) => void received.push(outcome),
    },
  });
  assert.deepEqual({ off: entries['/off']?.state, on: entries['/on']?.state }, { off: 'dropped', on: 'delivered' });
  assert.deepEqual(received.sort(), ['delivered', 'dropped'], 'one attempt (the enabled account\'s); the other event counted as dropped');
  assert.equal((await store.get('/off'))?.status, 'enabled', 'the reseller\'s endpoint is not disabled by the operator\'s account switch');
});
