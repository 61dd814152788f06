/**
 * Every request's input and every JSON answer are parsed by zod's compiled parser of their schema
 * (src/http/compiled-schema.ts): made once per schema, with the schema's own output and issues.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { compiled } from '../../src/http/compiled-schema.js';
import { PageQuerySchema, pageSchema } from '../../src/http/pagination.js';
import { InvoiceSchema } from '../../src/v1/schemas.js';

const InvoicePage = pageSchema(InvoiceSchema, 'InvoicePage');
const money = (amount: string) => ({ amount, currency: 'USD', cost: '1.00' });
const invoice = (id: string) => ({
  id, number: `INV-${id}`, status: 'unpaid', issued_on: '2026-01-01', due_on: '2026-01-08', paid_at: null,
  subtotal: money('9.99'), tax: money('0.00'), credit: money('0.00'), total: money('9.99'), admin_notes: 'x',
});
const page = (data: unknown[]) => ({ data, meta: { page: 1, per_page: 25, total: 2, last_page: 1, cost: 1 }, links: { first: '/a', prev: null, next: null, last: '/a' } });

t.test('is made once per schema', async () => {
  assert.equal(compiled(InvoicePage), compiled(InvoicePage));
  assert.notEqual(compiled(InvoicePage), InvoicePage);
});

t.test('gives the schema\'s own output: undocumented fields stripped at every level', async () => {
  const body = page([invoice('1'), invoice('2')]);
  const output = compiled(InvoicePage).parse(body);
  assert.deepEqual(output, InvoicePage.parse(body));
  assert.doesNotMatch(JSON.stringify(output), /admin_notes|cost/);
  assert.equal(output.data.length, 2);
});

t.test('refuses what the schema refuses, with the same issues', async () => {
  const bad = page([invoice('1'), { ...invoice('0'), status: 'overdue', total: { amount: 9.99, currency: 'usd' } }, 'x']);
  const mine = compiled(InvoicePage).safeParse(bad);
  const reference = InvoicePage.safeParse(bad);
  assert.equal(mine.success, false);
  assert.deepEqual(mine.error?.issues, reference.error?.issues);
  assert.ok((reference.error?.issues.length ?? 0) >= 4);
  for (const query of [{}, { page: '2', per_page: '50' }, { page: '0' }, { per_page: 'many' }, { page: '1', extra: '1' }]) {
    assert.deepEqual(compiled(PageQuerySchema).safeParse(query), PageQuerySchema.safeParse(query), JSON.stringify(query));
  }
});
