/**
 * The upstream down while the change detector runs. Each pass read every webhook
 * account and wrote one warning, with its stack, per account: a hosting company with 300 resellers
 * on webhooks got 300 lines a pass, every pass of the outage. Now the first failure of a kind is
 * written at once (with its account and error), the others counted exactly into a summary,
 * written when the window ends or the detector stops.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import pino from 'pino';
import type { FastifyBaseLogger } from 'fastify';
import { BackendError, type Backend } from '../../src/backend/backend.js';
import { MemoryWebhookOutbox } from '../../src/stores/memory/webhook-outbox.js';
import { MemoryWebhookStore } from '../../src/stores/memory/webhook-store.js';
import type { AccountRecord, KeyStore } from '../../src/stores/types.js';
import { ChangeDetector } from '../../src/webhooks/detector.js';
import { WebhookEvents } from '../../src/webhooks/emitter.js';
import { webhookRecord } from '../stores/conformance.js';

type Line = Record<string, unknown> & { msg: string };

t.test('upstream down: a pass over many accounts writes one line at once and an exact count', async () => {
  const lines: Line[] = [];
  const log = pino({ level: 'info' }, { write: (text: string) => void lines.push(JSON.parse(text) as Line) }) as unknown as FastifyBaseLogger;
  const store = new MemoryWebhookStore();
  const ACCOUNTS = 50;
  const accounts: AccountRecord[] = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const id = `acct${i}`;
    accounts.push({ id, name: id, upstreamId: String(i + 1), createdAt: new Date().toISOString() });
    await store.set(id, webhookRecord(`https://hooks.example.com/${id}`, 'sealed', new Date().toISOString()), null);
  }
  let calls = 0;
  const down = () => {
    calls += 1;
    throw new BackendError('unavailable', 'The billing backend is unreachable.', { operatorMessage: 'WHMCS GetClientsProducts: connect ECONNREFUSED 192.0.2.10:443' });
  };
  const backend = new Proxy({}, { get: (_target, name) => (name === 'then' ? undefined : async () => down()) }) as unknown as Backend;
  const keys = { listAccounts: async () => accounts } as unknown as KeyStore;
  const events = new WebhookEvents(store, new MemoryWebhookOutbox(), log);
  const detector = new ChangeDetector({ backend, keys, store, events, pollIntervalMs: 60_000, log });

  await detector.tick();
  await detector.tick();
  assert.ok(calls >= 2 * ACCOUNTS, `every account was read, each pass: ${calls} calls`);
  const failed = () => lines.filter((line) => line.msg.startsWith('webhook change detection failed for an account'));
  const during = failed();
  assert.ok(during.length >= 1 && during.length <= 2, `a bounded number of lines, not one per account and pass: ${during.length} for ${2 * ACCOUNTS} failures`);
  assert.equal(during[0]?.account_id, 'acct0', 'the first line names its account');
  assert.match(String((during[0]?.err as { message?: string } | undefined)?.message), /unreachable/, 'and carries the error');

  await detector.stop();
  const all = failed();
  const accounted = all.reduce((sum, line) => sum + (line.log_summary === true ? Number(line.repeated) : 1), 0);
  assert.equal(accounted, 2 * ACCOUNTS, 'every failed account read is accounted for, exactly');
});
