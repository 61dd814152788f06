/**
 * FOSSBilling mapping details a reseller sees:
 * - an order whose renewal failed (`failed_renew`) is a service still running: `active` until
 *   FOSSBilling suspends it, not `suspended` (which would tell the reseller's customer it is down);
 * - a paid invoice was paid in full (FOSSBilling takes no partial payments); a refunded one keeps
 *   nothing: the PDF's "amount paid" is what was paid and not given back, as on WHMCS (whose
 *   balance counts refunds), with nothing due.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { mapInvoiceDocument, mapService } from '../../../mappings/fossbilling/map.js';
import { ClientAnswer, InvoiceAnswer, OrderAnswer } from '../../../mappings/fossbilling/parse.js';

const order = (status: string) =>
  OrderAnswer.parse({
    id: 7,
    client_id: 1,
    product_id: 3,
    title: 'VPS S',
    currency: 'USD',
    period: '1M',
    quantity: 1,
    price: '9.99',
    total: '9.99',
    status,
    expires_at: '2026-12-01 00:00:00',
    activated_at: '2026-11-01 00:00:00',
    canceled_at: null,
    created_at: '2026-11-01 00:00:00',
  });

t.test('failed_renew is an active service; suspended is suspended', async () => {
  assert.equal(mapService(order('failed_renew'), 'USD').status, 'active');
  assert.equal(mapService(order('suspended'), 'USD').status, 'suspended');
});

t.test('amount paid: the total of a paid invoice, nothing of a refunded one; nothing due on either', async () => {
  const client = ClientAnswer.parse({ id: 1, email: 'a@example.com', first_name: 'A', last_name: 'B', currency: 'USD' });
  const invoice = (status: string) =>
    InvoiceAnswer.parse({
      id: 5,
      client_id: 1,
      currency: 'USD',
      status,
      subtotal: '10.00',
      tax: '2.00',
      total: '12.00',
      credit: '0.00',
      due_at: '2026-11-10 00:00:00',
      paid_at: '2026-11-02 10:00:00',
      created_at: '2026-11-01 00:00:00',
    });
  const refunded = mapInvoiceDocument(invoice('refunded'), client, 'USD', 'UTC');
  assert.equal(refunded.status, 'refunded');
  assert.deepEqual(refunded.amount_paid, { amount: '0.00', currency: 'USD' });
  assert.deepEqual(refunded.balance, { amount: '0.00', currency: 'USD' });
  const paid = mapInvoiceDocument(invoice('paid'), client, 'USD', 'UTC');
  assert.deepEqual(paid.amount_paid, { amount: '12.00', currency: 'USD' });
});
