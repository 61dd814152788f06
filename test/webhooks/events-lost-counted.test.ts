/**
 * Nothing accepted is lost unseen: an event of a write that the stores refused longer than it can
 * be held, and an event not sent because its endpoint or account was disabled while it waited, are
 * counted in the metrics, not only logged.
 */
import assert from 'node:assert/strict';
import pino from 'pino';
import t from 'tap';
import { GatewayMetrics } from '../../src/ops/metrics.js';
import type { WebhookLossReason } from '../../src/ops/observers.js';
import { HeldEvents } from '../../src/webhooks/held-events.js';

const silent = pino({ level: 'silent' });
const entry = (n: number) => ({ eventId: `evt_${n}`, accountId: 'acme', body: '{"type":"order.created"}', trace: {} });

t.test('held events past the bound, and those still held at stop, are each counted by reason', async () => {
  const lost: WebhookLossReason[] = [];
  const held = new HeldEvents({
    queue: async () => {
      throw new Error('stores still refuse it');
    },
    log: silent,
    most: 2,
    firstRetryMs: 60_000,
    onLost: (reason) => lost.push(reason),
  });
  for (const n of [1, 2, 3, 4]) held.hold(entry(n), new Error('refused'));
  assert.deepEqual(lost, ['held_full', 'held_full'], 'the two beyond the bound');
  await held.close();
  assert.deepEqual(lost, ['held_full', 'held_full', 'stopped', 'stopped'], 'and the two held at stop');
  held.hold(entry(5), new Error('refused'));
  assert.deepEqual(lost.at(-1), 'stopped', 'one refused after the stop');
});

t.test('the metrics expose them, and deliveries dropped for a disabled endpoint, from zero', async () => {
  const metrics = new GatewayMetrics();
  const before = await metrics.registry.metrics();
  assert.match(before, /^gateway_webhook_events_lost_total\{reason="held_full"\} 0$/m);
  assert.match(before, /^gateway_webhook_events_lost_total\{reason="stopped"\} 0$/m);
  assert.match(before, /^gateway_webhook_deliveries_total\{outcome="dropped"\} 0$/m);
  metrics.eventLost('held_full');
  metrics.recordDelivery('dropped');
  const after = await metrics.registry.metrics();
  assert.match(after, /^gateway_webhook_events_lost_total\{reason="held_full"\} 1$/m);
  assert.match(after, /^gateway_webhook_deliveries_total\{outcome="dropped"\} 1$/m);
});
