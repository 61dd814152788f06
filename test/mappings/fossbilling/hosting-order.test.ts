/**
 * A FOSSBilling hosting order is made for a domain: `order/create` merges the product config with
 * the order's `config` and asks for `config.domain` (Servicehosting/Service.php, 0.8.5 and 56a0871
 * attachOrderConfig → _getDomainTuple; 0.6.x and 0.7.x prependOrderConfig → _getDomainTuple):
 * without it every hosting order fails ("Hosting product must have domain configuration", code 0,
 * answered as 9999 by ApiResponseFactory.php), and validateOrderData needs its sld and tld (703, 704).
 * The account's domain is `sld . tld` (action_create, toApiArray), so an own domain's tld carries its
 * dot. The gateway sent only `config.hostname`, which FOSSBilling ignores: every hosting order was a
 * 502, retried as an unknown outcome, never placed.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { backendWith, CUSTOMER, FakeCall, keyed, rejectsWith } from './fake-call.js';
import * as answers from './fixtures/answers.js';

const KEYED = keyed('key-hosting');

/** order/create as FOSSBilling's hosting service reads its config (allow_domain_own unset: allowed). */
function hostingCreate(allowOwn = true) {
  const made: string[] = [];
  const create = (params: Record<string, unknown>) => {
    const config = (params.config ?? {}) as { domain?: Record<string, unknown> };
    const domain = config.domain;
    if (!domain || typeof domain !== 'object') return FakeCall.error('Hosting product must have domain configuration');
    if (!domain.action) return FakeCall.error('Domain action is missing');
    if (domain.action === 'owndomain' && !allowOwn) return FakeCall.error('Using your own domain is not allowed for this product.');
    const sld = domain.action === 'owndomain' ? String(domain.owndomain_sld ?? '') : '';
    const given = domain.action === 'owndomain' ? String(domain.owndomain_tld ?? '') : '';
    const tld = given.includes('.') ? given : `.${given}`;
    if (!sld) return FakeCall.error('Domain name is invalid.', 703);
    if (tld === '.') return FakeCall.error('Domain extension is invalid.', 704);
    made.push(sld + tld);
    return 7;
  };
  return { made, create };
}

function ordering(create: (params: Record<string, unknown>) => unknown): FakeCall {
  return new FakeCall()
    .answer('client/get', answers.client)
    .answer('product/get_list', answers.page([answers.hostingProduct, answers.onceProduct]))
    .answer('order/create', create)
    .answer('order/get', answers.order)
    .answer('invoice/get_list', answers.page([answers.invoice]));
}

t.test('a hosting order is placed for the host name, as the client\'s own domain', async () => {
  const { made, create } = hostingCreate();
  const fake = ordering(create);
  const order = await backendWith(fake).placeOrder(CUSTOMER, { product_id: '1', billing_cycle: 'annually', hostname: 'site7.example.com' }, KEYED);
  assert.equal(order.id, '7');
  assert.deepEqual(made, ['site7.example.com']);
  // The v1 hostname is still read back from the order config.
  const sent = fake.calls.find((entry) => entry.method === 'order/create')?.params.config as Record<string, unknown>;
  assert.equal(sent.hostname, 'site7.example.com');
});

t.test('a hosting order without a domain name is refused before anything is sent', async () => {
  for (const hostname of [undefined, 'localhost']) {
    const { create } = hostingCreate();
    const fake = ordering(create);
    await rejectsWith(backendWith(fake).placeOrder(CUSTOMER, { product_id: '1', billing_cycle: 'annually', ...(hostname ? { hostname } : {}) }, KEYED), 'validation', /hostname/);
    assert.equal(fake.methods().includes('order/create'), false);
  }
});

t.test('FOSSBilling refusing the domain is the client\'s to fix (422), not an upstream error', async () => {
  const { create } = hostingCreate(false);
  await rejectsWith(backendWith(ordering(create)).placeOrder(CUSTOMER, { product_id: '1', billing_cycle: 'annually', hostname: 'site7.example.com' }, KEYED), 'validation', /hostname/);
  const invalid = ordering(() => FakeCall.error('Domain name is invalid.', 703));
  await rejectsWith(backendWith(invalid).placeOrder(CUSTOMER, { product_id: '1', billing_cycle: 'annually', hostname: 'site7.example.com' }, KEYED), 'validation', /hostname/);
});

t.test('other product types get no domain configuration', async () => {
  const fake = ordering(() => 7);
  await backendWith(fake).placeOrder(CUSTOMER, { product_id: '2', billing_cycle: 'onetime', hostname: 'site7.example.com' }, KEYED);
  assert.deepEqual(fake.calls.find((entry) => entry.method === 'order/create')?.params.config, { hostname: 'site7.example.com' });
});
