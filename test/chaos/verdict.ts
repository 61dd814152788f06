/**
 * What the chaos tests conclude: the clients' answers held against the upstream's own record of
 * AddOrder calls and orders, per key, and a one-line summary for the CI log.
 */
import { isDefinitive, type Answer, type Ledger, type OrderClient, type OrderSlot } from './orders.js';

export interface Verdict {
  orders: number;
  /** Orders beyond the first, summed over keys. */
  duplicates: number;
  keysPlacedTwice: string[];
  keysSentTwice: string[];
  /** Keys whose last answer is not a definitive one. */
  undecided: string[];
  /** Keys whose 201s do not all name the one upstream order of the key. */
  mismatched: string[];
  /** Keys whose replay after the end answered otherwise than their final answer. */
  inconsistentReplays: string[];
}

export function describeAnswer(answer: Answer): string {
  if (answer.status === 0) return 'no answer';
  return answer.reason ? `${answer.status} ${answer.reason}` : String(answer.status);
}

export function countBy<T>(items: T[], label: (item: T) => string): string {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(label(item), (counts.get(label(item)) ?? 0) + 1);
  return [...counts]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, count]) => `${name}×${count}`)
    .join(', ');
}

/** Shown fields: the order can always be found, so every key ends with it. Hidden: 201, or 503 and nothing sent again. */
function decided(final: Answer, hidesCustomFields: boolean): boolean {
  return hidesCustomFields ? isDefinitive(final, true) && [201, 503].includes(final.status) : final.status === 201;
}

export function judge(
  slots: OrderSlot[],
  finals: Answer[],
  replays: Answer[],
  client: OrderClient,
  ledger: Ledger,
  hidesCustomFields: boolean,
): Verdict {
  const orders = ledger.ordersBySlot();
  const calls = ledger.addOrderCallsBySlot();
  const upstreamOf = (slot: OrderSlot): string[] => orders.get(slot.id) ?? [];
  const mismatched = slots.flatMap((slot) => {
    const upstream = upstreamOf(slot);
    const named = new Set((client.answers.get(slot.id) ?? []).flatMap((answer) => (answer.orderId ? [answer.orderId] : [])));
    const fine = named.size === 0 || (upstream.length === 1 && named.size === 1 && named.has(upstream[0] as string));
    return fine ? [] : [`${slot.id}: answered ${[...named].join(', ')}, upstream ${upstream.join(', ') || 'none'}`];
  });
  return {
    orders: [...orders.values()].reduce((sum, list) => sum + list.length, 0),
    duplicates: [...orders.values()].reduce((sum, list) => sum + Math.max(0, list.length - 1), 0),
    keysPlacedTwice: slots.filter((slot) => upstreamOf(slot).length > 1).map((slot) => `${slot.id}: orders ${upstreamOf(slot).join(', ')}`),
    keysSentTwice: slots.filter((slot) => (calls.get(slot.id) ?? 0) > 1).map((slot) => `${slot.id}: ${calls.get(slot.id)} AddOrders`),
    undecided: slots.flatMap((slot, index) => {
      const final = finals[index] as Answer;
      return decided(final, hidesCustomFields) ? [] : [`${slot.id}: ${describeAnswer(final)}`];
    }),
    mismatched,
    inconsistentReplays: slots.flatMap((slot, index) => {
      const [final, replay] = [finals[index] as Answer, replays[index] as Answer];
      return final.status === replay.status ? [] : [`${slot.id}: ${describeAnswer(final)}, then ${describeAnswer(replay)}`];
    }),
  };
}
