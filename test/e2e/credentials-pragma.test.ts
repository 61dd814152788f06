/**
 * The OpenAPI document marks `Pragma: no-cache` required on a credentials answer (for HTTP/1.0
 * caches, beside `Cache-Control: no-store`). Every backend's gateway must send it; the v1
 * passthrough made its answer's headers from `answerHeaders` only, which the credentials endpoint
 * did not declare, so its credentials went out without Pragma.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { buildBackendGateway } from '../helpers/backend-gateway.js';
import { call } from '../helpers/http.js';

for (const backend of ['whmcs', 'fossbilling', 'v1']) {
  t.test(`${backend}: credentials carry the headers the document requires`, async (t) => {
    const gw = await buildBackendGateway(backend, { profile: 'A' });
    t.teardown(() => gw.close());
    const key = gw.keys['acme:all'] as string;
    const doc = (await call(gw.base, 'GET', '/v1/openapi.json')).json();
    const documented = doc.paths['/v1/services/{id}/credentials'].get.responses['200'].headers as Record<string, { required?: boolean }>;
    const required = Object.entries(documented).filter(([, header]) => header.required).map(([name]) => name.toLowerCase());
    assert.ok(required.includes('pragma'), 'the document requires Pragma');

    const services = (await call(gw.base, 'GET', '/v1/services?per_page=100', { key })).json().data as { id: string; status: string }[];
    const id = services.find((service) => service.status === 'active')?.id;
    assert.ok(id, 'an active service');
    const response = await call(gw.base, 'GET', `/v1/services/${id}/credentials`, { key });
    assert.equal(response.status, 200, response.text);
    for (const name of required) assert.ok(name in response.headers, `${name} is sent`);
    assert.equal(response.headers.pragma, 'no-cache');
    assert.equal(response.headers['cache-control'], 'no-store');
  });
}
