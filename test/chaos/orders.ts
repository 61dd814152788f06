/**
 * The client side of the chaos tests and their ledger: API keys for several accounts, one order
 * per Idempotency-Key, retries that follow the gateway's answers, and the count of what the
 * upstream actually received, per key.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Agent, request } from 'undici';
import { decodeSerializedArray } from '../../simulators/whmcs/php-serialize.js';
import type { WhmcsSimulator } from '../../simulators/whmcs/server.js';
import { KeyService } from '../../src/keys/key-service.js';
import { createRedisStores } from '../../src/stores/redis/index.js';
import { CHAOS_PEPPER } from './gateway-process.js';

/**
 * Several accounts (two of them on one WHMCS client, as the key tag allows, and as a store written
 * before the gateway refused it may hold: written unconditionally), one key each.
 */
const ACCOUNTS = [
  { id: 'acme', upstreamId: '1' },
  { id: 'acme-west', upstreamId: '1' },
  { id: 'beta', upstreamId: '2' },
  { id: 'gamma', upstreamId: '3' },
] as const;
const ORDER_BODY = JSON.stringify({ product_id: '2', billing_cycle: 'monthly' });

export interface OrderSlot {
  accountId: string;
  apiKey: string;
  idempotencyKey: string;
  /** `account:key`, as the ledger names it. */
  id: string;
}

export interface Answer {
  /** 0: no HTTP answer (connection refused or cut). */
  status: number;
  reason?: string;
  orderId?: string;
  retryAfterMs?: number;
}

/** Creates the accounts in the gateway's Redis and one ordering key for each. */
export async function issueAccountKeys(redisUrl: string): Promise<Array<{ accountId: string; apiKey: string }>> {
  const stores = await createRedisStores({ url: redisUrl });
  try {
    const keys = new KeyService(stores.keys, CHAOS_PEPPER);
    const issued = [];
    for (const account of ACCOUNTS) {
      await stores.keys.putAccount({ id: account.id, name: `Chaos ${account.id}`, upstreamId: account.upstreamId, createdAt: new Date().toISOString() });
      const { key } = await keys.issue({ accountId: account.id, name: 'chaos', scopes: ['write:orders'] });
      issued.push({ accountId: account.id, apiKey: key });
    }
    return issued;
  } finally {
    await stores.close();
  }
}

/** `count` orders spread over the accounts, with keys `<prefix>-0000`…: fixed width, so no key is a prefix of another in the upstream tag. */
export function orderSlots(accounts: Array<{ accountId: string; apiKey: string }>, prefix: string, count: number): OrderSlot[] {
  return Array.from({ length: count }, (_, index) => {
    const { accountId, apiKey } = accounts[index % accounts.length] as { accountId: string; apiKey: string };
    const key = `${prefix}-${String(index).padStart(4, '0')}`;
    return { accountId, apiKey, idempotencyKey: key, id: `${accountId}:${key}` };
  });
}

export class OrderClient {
  /** Own connections, closed at the end, so that no socket outlives the test. */
  private readonly agent = new Agent({ headersTimeout: 20_000, bodyTimeout: 20_000, connectTimeout: 2_000 });
  /** Every answer per slot id, in order. */
  readonly answers = new Map<string, Answer[]>();
  private closed = false;

  /** After close, retries stop: nothing outlives the test. */
  get isClosed(): boolean {
    return this.closed;
  }

  async place(base: string, slot: OrderSlot): Promise<Answer> {
    const answer = await request(`${base}/v1/orders`, {
      dispatcher: this.agent,
      method: 'POST',
      headers: { authorization: `Bearer ${slot.apiKey}`, 'content-type': 'application/json', 'idempotency-key': slot.idempotencyKey },
      body: ORDER_BODY,
    }).then(readAnswer, (): Answer => ({ status: 0 }));
    const list = this.answers.get(slot.id) ?? [];
    list.push(answer);
    this.answers.set(slot.id, list);
    return answer;
  }

  close(): Promise<void> {
    this.closed = true;
    return this.agent.destroy();
  }
}

async function readAnswer(response: Awaited<ReturnType<typeof request>>): Promise<Answer> {
  let body: Record<string, unknown> = {};
  try {
    body = (await response.body.json()) as Record<string, unknown>;
  } catch {
    // cut off or not JSON: the status alone tells
  }
  const header = response.headers['retry-after'];
  const seconds = Number(Array.isArray(header) ? header[0] : header);
  return {
    status: response.statusCode,
    ...(typeof body.reason === 'string' ? { reason: body.reason } : {}),
    ...(response.statusCode === 201 && typeof body.id === 'string' ? { orderId: body.id } : {}),
    ...(header !== undefined && Number.isFinite(seconds) ? { retryAfterMs: seconds * 1000 } : {}),
  };
}

/**
 * Whether an answer ends the retries for its key: an order (new or replayed), or, against an
 * upstream that hides custom fields, the gateway saying it cannot know (or will not order) and
 * sent nothing. Everything else that is not a plain client error asks for another try.
 */
export function isDefinitive(answer: Answer, hidesCustomFields: boolean): boolean {
  if (answer.status === 201) return true;
  if (hidesCustomFields && answer.status === 503 && (answer.reason === 'outcome_unknown' || answer.reason === 'backend_misconfigured')) {
    return true;
  }
  const retryable = answer.status === 0 || answer.status === 409 || answer.status === 429 || answer.status >= 500;
  const otherConflict = answer.status === 409 && answer.reason !== 'idempotency_in_progress';
  return !retryable || otherConflict;
}

export interface RetryBounds {
  /** May be moved while retries run (after a restart). */
  deadline: number;
  maxAttempts: number;
  /** Wait when the answer names none (Retry-After absent). */
  defaultWaitMs: number;
  /** Wait after no answer at all (the gateway is down): a client backs off. */
  unreachableWaitMs: number;
  /** The longest wait, whatever Retry-After says: a slow answer must not outlast the test. */
  maxWaitMs: number;
}

/**
 * Retries one key until a definitive answer, following Retry-After, within the bounds. Gives up on
 * a key early once the upstream holds two orders for it: the test has failed for that key, and
 * further retries would only place more.
 */
export async function retryUntilDefinitive(
  client: OrderClient,
  base: string,
  slot: OrderSlot,
  ledger: Ledger,
  hidesCustomFields: boolean,
  bounds: RetryBounds,
): Promise<Answer> {
  let answer: Answer = { status: 0 };
  for (let attempt = 0; attempt < bounds.maxAttempts && !client.isClosed; attempt += 1) {
    answer = await client.place(base, slot);
    if (isDefinitive(answer, hidesCustomFields) || ledger.ordersOf(slot.id).length > 1) return answer;
    const asked = answer.status === 0 ? bounds.unreachableWaitMs : (answer.retryAfterMs ?? bounds.defaultWaitMs);
    const wait = Math.min(asked, bounds.maxWaitMs, bounds.deadline - Date.now());
    if (wait <= 0) return answer;
    await sleep(Math.max(wait, 50));
  }
  return answer;
}

/**
 * What the upstream received and holds for one set of slots, read from the simulator itself: the
 * AddOrder calls since the ledger was opened, and the orders whose service carries a slot's key tag.
 */
export class Ledger {
  private readonly slotIds: Set<string>;
  private readonly firstCall: number;

  constructor(
    private readonly simulator: WhmcsSimulator,
    slots: OrderSlot[],
  ) {
    this.slotIds = new Set(slots.map((slot) => slot.id));
    this.firstCall = simulator.calls.length;
  }

  /** The tag the gateway wrote upstream (`account:key`, anything after that ignored) as a slot id of this ledger. */
  private slotOfTag(value: unknown): string | undefined {
    if (typeof value !== 'string') return undefined;
    const [account, key] = value.split(':');
    const id = `${account}:${key}`;
    return this.slotIds.has(id) ? id : undefined;
  }

  private addOrders() {
    return this.simulator.calls.slice(this.firstCall).filter((call) => call.action === 'addorder');
  }

  addOrderCalls(): number {
    return this.addOrders().length;
  }

  /** AddOrder calls per slot id (from the custom field each call carried). */
  addOrderCallsBySlot(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const call of this.addOrders()) {
      const field = (call.params.customfields as Record<string, unknown> | undefined)?.['0'];
      const values = typeof field === 'string' ? [...(decodeSerializedArray(field)?.values() ?? [])] : [];
      const id = values.map((value) => this.slotOfTag(value)).find((each) => each !== undefined);
      if (id) counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    return counts;
  }

  /** Upstream order ids per slot id. */
  ordersBySlot(): Map<string, string[]> {
    const orders = new Map<string, string[]>();
    for (const service of this.simulator.state.services) {
      const id = Object.values(service.customFieldValues).map((value) => this.slotOfTag(value)).find((each) => each !== undefined);
      if (id) orders.set(id, [...(orders.get(id) ?? []), String(service.orderId)]);
    }
    return orders;
  }

  ordersOf(slotId: string): string[] {
    return this.ordersBySlot().get(slotId) ?? [];
  }
}
