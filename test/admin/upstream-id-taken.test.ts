/**
 * The admin API keeps one upstream customer to one account: a creation or a remap onto a customer
 * another account holds is refused with 409 upstream_id_taken (naming the holder to the operator),
 * a remap frees the customer it leaves, and of two creations racing for one customer one wins.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { buildAdminGateway, type AdminGateway } from './helpers.js';

t.test('admin API: one upstream customer, one account', async (t) => {
  let gw: AdminGateway;
  t.before(async () => {
    // The test gateway maps acme to customer 1 and beta to customer 2.
    gw = await buildAdminGateway();
  });
  t.teardown(() => gw.close());

  const taken = (response: Awaited<ReturnType<AdminGateway['admin']>>, holder: string, upstreamId: string) => {
    assert.equal(response.statusCode, 409, response.body);
    assert.match(String(response.headers['content-type']), /^application\/problem\+json/);
    const body = response.json();
    assert.equal(body.reason, 'upstream_id_taken');
    assert.equal(body.held_by, holder);
    assert.match(body.detail, new RegExp(`upstream customer ${upstreamId} is mapped to account ${holder}`));
  };

  t.test('a new account on a customer another account holds is refused, and not created', async () => {
    taken(await gw.admin('POST', '/admin/v1/accounts', { body: { id: 'typo', name: 'Typo', upstream_id: '1' } }), 'acme', '1');
    assert.equal((await gw.admin('GET', '/admin/v1/accounts/typo')).statusCode, 404);
  });

  t.test('a remap onto a held customer is refused; a remap elsewhere frees the one left', async () => {
    taken(await gw.admin('PATCH', '/admin/v1/accounts/beta', { body: { upstream_id: '1' } }), 'acme', '1');
    assert.equal((await gw.admin('GET', '/admin/v1/accounts/beta')).json().upstream_id, '2');
    const moved = await gw.admin('PATCH', '/admin/v1/accounts/acme', { body: { upstream_id: '3' } });
    assert.equal(moved.statusCode, 200, moved.body);
    assert.equal((await gw.admin('POST', '/admin/v1/accounts', { body: { id: 'heir', name: 'Heir', upstream_id: '1' } })).statusCode, 201);
    taken(await gw.admin('POST', '/admin/v1/accounts', { body: { id: 'late', name: 'Late', upstream_id: '3' } }), 'acme', '3');
  });

  t.test('a disabled account keeps its customer', async () => {
    assert.equal((await gw.admin('POST', '/admin/v1/accounts/beta/disable')).statusCode, 200);
    taken(await gw.admin('POST', '/admin/v1/accounts', { body: { id: 'vulture', name: 'Vulture', upstream_id: '2' } }), 'beta', '2');
  });

  t.test('two creations racing for one customer: one is created, the other refused', async () => {
    const [first, second] = await Promise.all(
      ['racer-a', 'racer-b'].map((id) => gw.admin('POST', '/admin/v1/accounts', { body: { id, name: id, upstream_id: '99' } })),
    );
    assert.deepEqual([first?.statusCode, second?.statusCode].sort(), [201, 409]);
    const holders = (await gw.stores.keys.listAccounts()).filter((account) => account.upstreamId === '99');
    assert.equal(holders.length, 1);
  });
});
