/**
 * The change detector's baseline mark in a fleet of this release and the previous one (a rolling
 * deploy, a rollback): the detector lease passes between instances of both. The previous release
 * takes a mark whose tag is not the account's upstream id for a mark of another customer and starts
 * the account over from a baseline (recording, reporting nothing), then writes the plain id back.
 * An account enabled again (enabledAt) must not make the two releases take each other's marks for
 * another customer's: every hand-over of the lease would be a baseline pass, and what changed since
 * the pass before would never be reported.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import type { Customer } from '../../src/backend/backend.js';
import { MemoryWebhookStore } from '../../src/stores/memory/webhook-store.js';
import type { PageRequest, Service } from '../../src/v1/schemas.js';
import { BASELINE_FIELD } from '../../src/webhooks/emitter.js';
import { ACCOUNT, detectorOver } from '../helpers/detector-harness.js';

const service = (id: string, status: Service['status']) => ({ id, status, order_id: null }) as unknown as Service;

class FakeBackend {
  services: Service[] = [service('1', 'active')];
  async listServices(_customer: Customer, page: PageRequest) {
    return { items: this.services.slice((page.page - 1) * page.perPage, page.page * page.perPage), total: this.services.length };
  }
  async listInvoices() {
    return { items: [], total: 0 };
  }
}

/** What the previous release's detector decides from a mark: a baseline pass when its tag names another customer. */
const previousReleaseRebaselines = (tag: string, upstreamId: string): boolean => tag !== '' && tag !== upstreamId;

t.test('an account enabled again, its detector lease handed between releases', async () => {
  const store = new MemoryWebhookStore();
  const backend = new FakeBackend();
  const { detector, queued, account } = await detectorOver(store, backend);
  await detector.tick();
  // Disabled and enabled again between two passes (POST /admin/v1/accounts/acme/disable, /enable).
  account.disabledAt = null;
  account.enabledAt = new Date().toISOString();
  backend.services[0] = service('1', 'suspended');
  await detector.tick();
  assert.deepEqual(await queued(), [], 'what changed while it was disabled is no news');

  const mark = await store.readSnapshotState(ACCOUNT, BASELINE_FIELD);
  assert.ok(mark);
  assert.equal(
    previousReleaseRebaselines(mark.tag, account.upstreamId),
    false,
    `the mark's tag "${mark.tag}" reads to the previous release as another customer's: its next pass reports nothing`,
  );

  // The previous release's pass over it leaves the mark as it is (it writes one only on a baseline).
  backend.services[0] = service('1', 'active');
  await detector.tick();
  assert.deepEqual(await queued(), ['service.status_changed 1'], 'a later change is reported');
});
