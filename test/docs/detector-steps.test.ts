/**
 * The change detector compares states every pollIntervalMs: a change made upstream and undone
 * before the next pass is never reported (checked below against the detector). The README's
 * "Webhooks" section must say so, or an integrator counts on an event for every step.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { BackendError } from '../../src/backend/backend.js';
import { MemoryWebhookStore } from '../../src/stores/memory/webhook-store.js';
import type { Service } from '../../src/v1/schemas.js';
import { detectorOver } from '../helpers/detector-harness.js';

t.test('a change undone between two passes: not reported, and the README says so', async () => {
  const services = [{ id: '1', status: 'active', order_id: null } as unknown as Service];
  const backend = {
    listServices: async () => ({ items: services, total: services.length }),
    listInvoices: async () => ({ items: [], total: 0 }),
    getOrder: async () => {
      throw new BackendError('not_found', 'none');
    },
  };
  const { detector, queued } = await detectorOver(new MemoryWebhookStore(), backend);
  await detector.tick();
  services[0] = { ...services[0], status: 'suspended' } as Service;
  services[0] = { ...services[0], status: 'active' } as Service;
  await detector.tick();
  assert.deepEqual(await queued(), [], 'suspended and unsuspended between two passes');

  const readme = readFileSync('README.md', 'utf8');
  const section = /\n## Webhooks\n([\s\S]*?)\n## /.exec(readme)?.[1]?.replace(/\s+/g, ' ') ?? '';
  assert.ok(section.length > 0, 'the Webhooks section was found');
  assert.match(section, /changed and changed back between two passes[^.]*not reported/, 'the README says a change undone between two passes is not reported');
});
