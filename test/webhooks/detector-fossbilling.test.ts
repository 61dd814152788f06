/**
 * The change detector over FOSSBilling, whose service list is read whole (its order list counts
 * joined meta rows): one pass reads it once, not once per page of 100 (which made a pass's calls
 * grow with the square of the orders), and a client past the rows bound, whose services cannot be
 * listed, still has its invoices and known orders watched.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { MemoryWebhookStore } from '../../src/stores/memory/webhook-store.js';
import { detectorOver } from '../helpers/detector-harness.js';
import { backendWith, FakeCall } from '../mappings/fossbilling/fake-call.js';
import * as answers from '../mappings/fossbilling/fixtures/answers.js';

function upstream(orderCount: number, metaRows: number) {
  const makeOrders = (count: number) => Array.from({ length: count }, (_, index) => ({
    ...answers.orderRow,
    id: String(count - index),
    meta: Object.fromEntries(Array.from({ length: metaRows }, (_, n) => [`meta_${n}`, '1'])),
  }));
  let rows = makeOrders(orderCount).flatMap((order) => Array.from({ length: metaRows }, () => order));
  const grow = (count: number) => {
    rows = makeOrders(count).flatMap((order) => Array.from({ length: metaRows }, () => order));
  };
  const invoice = { ...answers.invoice, status: 'unpaid' };
  const fake = new FakeCall()
    .answer('client/get', answers.client)
    .answer('order/get_list', (params: Record<string, unknown>) => {
      const page = Number(params.page ?? 1);
      const perPage = Number(params.per_page ?? 100);
      const slice = rows.slice((page - 1) * perPage, page * perPage);
      return { pages: Math.ceil(rows.length / perPage), page, per_page: perPage, total: rows.length, list: [...new Set(slice)] };
    })
    .answer('order/get', (params: Record<string, unknown>) => ({ ...answers.order, id: Number(params.id) }))
    .answer('invoice/get_list', () => answers.page([invoice]));
  return { fake, invoice, grow };
}

async function setUp(fake: FakeCall) {
  const { detector, queued: described } = await detectorOver(new MemoryWebhookStore(), backendWith(fake));
  /** The types of the events queued since the last call. */
  const queued = async (): Promise<string[]> => (await described()).map((event) => event.split(' ')[0] as string);
  return { detector, queued };
}

t.test('one detector pass over 2000 FOSSBilling orders reads the order list about once, not once per page of 100', async () => {
  const { fake } = upstream(2_000, 1);
  const { detector } = await setUp(fake);
  await detector.tick();
  const lists = fake.methods().filter((method) => method === 'order/get_list').length;
  // 2000 joined rows are 4 pages of 500; before f0aa46e a pass read 20 pages of 100.
  assert.ok(lists <= 20, `order/get_list called ${lists} times in one pass`);
});

t.test('a client that grows past 10 000 joined order rows: its invoices are still watched', async () => {
  const { fake, invoice, grow } = upstream(3_000, 3);
  const { detector, queued } = await setUp(fake);
  await detector.tick();
  assert.deepEqual(await queued(), [], 'baseline');
  grow(3_400);
  invoice.status = 'paid';
  await detector.tick();
  assert.deepEqual(await queued(), ['invoice.paid'], 'the invoice paid meanwhile is reported');
});
