/**
 * The v1 passthrough relabels the upstream's page as the page the client asked for. When the
 * upstream answered another window of its list (it capped `per_page` below the asked value, or
 * clamped a page past its end to its last page, as FOSSBilling's Pagination::paginateArray does),
 * the gateway's `meta` and `links` (computed from the asked page and per_page and the upstream's
 * total) no longer describe the records in `data`: an integrator walking `next` silently skips
 * records, or gets the last page's records again. Such a page is not one this gateway can answer: 502.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { bearer } from '../../helpers/gateway.js';
import { buildPassthroughGateway, json, type PassthroughGateway, SERVICE } from './harness.js';

const service = (id: number) => ({ ...SERVICE, id: String(id) });
const links = (perPage: number, last: number) => ({
  first: `/v1/services?page=1&per_page=${perPage}`,
  prev: null,
  next: null,
  last: `/v1/services?page=${last}&per_page=${perPage}`,
});

t.test('v1 passthrough: a page of another window than the one asked for', async (t) => {
  let gw: PassthroughGateway;
  t.before(async () => {
    gw = await buildPassthroughGateway();
  });
  t.teardown(() => gw.close());

  t.test('an upstream that capped per_page: records 3-4 of 6 would never be listed', async () => {
    // Asked for 4 a page; the upstream pages by 2 and says so. The gateway would say last_page 2,
    // and page 2 (upstream records 3-4) would be the end: records 5-6 lost without a word.
    gw.upstream.answer(json(200, { data: [service(1), service(2)], meta: { page: 1, per_page: 2, total: 6, last_page: 3 }, links: links(2, 3) }));
    const response = await gw.app.inject({ method: 'GET', url: '/v1/services?per_page=4', headers: bearer(gw.keys['acme:all']) });
    assert.equal(response.statusCode, 502, response.body);
    assert.equal(response.json().reason, 'upstream_error');
  });

  t.test('an upstream that clamped a page past its end: its last page is not page 5', async () => {
    gw.upstream.answer(json(200, { data: [service(3)], meta: { page: 2, per_page: 2, total: 3, last_page: 2 }, links: links(2, 2) }));
    const response = await gw.app.inject({ method: 'GET', url: '/v1/services?page=5&per_page=2', headers: bearer(gw.keys['acme:all']) });
    assert.equal(response.statusCode, 502, response.body);
  });

  t.test('the page asked for, echoed: passed on', async () => {
    gw.upstream.answer(json(200, { data: [service(1), service(2)], meta: { page: 1, per_page: 2, total: 3, last_page: 2 }, links: links(2, 2) }));
    const response = await gw.app.inject({ method: 'GET', url: '/v1/services?per_page=2', headers: bearer(gw.keys['acme:all']) });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(response.json().meta, { page: 1, per_page: 2, total: 3, last_page: 2 });
    // A page past the end with no rows, as this gateway answers it, is passed on too.
    gw.upstream.answer(json(200, { data: [], meta: { page: 9, per_page: 2, total: 3, last_page: 2 }, links: links(2, 2) }));
    const beyond = await gw.app.inject({ method: 'GET', url: '/v1/services?page=9&per_page=2', headers: bearer(gw.keys['acme:all']) });
    assert.equal(beyond.statusCode, 200, beyond.body);
    assert.equal(beyond.json().links.next, null);
  });
});
