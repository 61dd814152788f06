/**
 * The settings every backend's section shares: the breaker's defaults and bounds, and the client
 * options made from a section and its wiring.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { MockAgent } from 'undici';
import { CircuitBreakerSchema, MaxResponseBytesSchema, upstreamClientOptions } from '../../src/upstream/settings.js';

t.test('the breaker is on by default: five down-signals open it for ten seconds', async () => {
  assert.deepEqual(CircuitBreakerSchema.parse(undefined), { enabled: true, failureThreshold: 5, openMs: 10_000 });
  assert.deepEqual(CircuitBreakerSchema.parse({ failureThreshold: 2 }), { enabled: true, failureThreshold: 2, openMs: 10_000 });
});

t.test('the breaker refuses unknown fields and thresholds that are not positive whole numbers', async () => {
  for (const bad of [{ failureThreshold: 0 }, { openMs: 1.5 }, { enabled: 'yes' }, { threshold: 3 }]) {
    assert.equal(CircuitBreakerSchema.safeParse(bad).success, false, JSON.stringify(bad));
  }
});

t.test('the answer cap: 5 MiB by default, from 64 KiB to 256 MiB', async () => {
  assert.equal(MaxResponseBytesSchema.parse(undefined), 5 * 1024 * 1024);
  assert.equal(MaxResponseBytesSchema.parse(32 * 1024 * 1024), 32 * 1024 * 1024);
  for (const bad of [1000, 512 * 1024 * 1024, 1.5, '5MB']) assert.equal(MaxResponseBytesSchema.safeParse(bad).success, false, String(bad));
});

t.test("a section and its wiring make the client's options: the pool connects to the URL's origin", async () => {
  const agent = new MockAgent();
  const now = (): number => 42;
  const observer = { called() {}, cacheLookup() {}, coalesced() {}, breakerState() {} };
  const circuitBreaker = { enabled: false, failureThreshold: 3, openMs: 500 };
  const options = upstreamClientOptions(
    { url: 'https://billing.example.com:8443/whmcs/includes/api.php', connections: 4, connectTimeoutMs: 750, maxResponseBytes: 1024, circuitBreaker },
    { dispatcher: agent, now, hooks: { observer } },
  );
  assert.equal(options.origin, 'https://billing.example.com:8443');
  assert.equal(options.connections, 4);
  assert.equal(options.connectTimeoutMs, 750);
  assert.equal(options.maxResponseBytes, 1024);
  assert.equal(options.circuitBreaker, circuitBreaker);
  assert.equal(options.dispatcher, agent);
  assert.equal(options.now, now);
  assert.equal(options.observer, observer);
  assert.equal(options.logger, undefined);
  await agent.close();
});
