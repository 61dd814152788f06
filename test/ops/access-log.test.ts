/**
 * The access log (src/logger.ts): one line per request, written apart from pino's pipeline, in
 * pino's format, with its fixed fields and nothing secret.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { parseApiKey } from '../../src/keys/api-key.js';
import { jsonText } from '../../src/logger.js';
import { bearer, buildTestGateway } from '../helpers/gateway.js';

function accessLines(logs: string[]): Array<Record<string, unknown>> {
  return logs
    .flatMap((chunk) => chunk.split('\n'))
    .filter((line) => line.includes('"msg":"request completed"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

t.test('one line per request: pino format, the request, its answer and ids, the query and key kept out', async () => {
  const gw = await buildTestGateway({});
  try {
    const key = gw.keys['acme:all'] as string;
    const response = await gw.app.inject({
      method: 'GET',
      url: '/v1/billing/invoices?page=1&per_page=5&access_token=abc123',
      headers: { ...bearer(key), 'x-request-id': 'client-7' },
    });
    const lines = accessLines(gw.logs);
    assert.equal(lines.length, 1, gw.logs.join(''));
    const line = lines[0] as Record<string, unknown>;
    assert.equal(line.level, 30);
    assert.ok(typeof line.time === 'number' && Math.abs(line.time - Date.now()) < 60_000, 'epoch ms, as pino writes it');
    assert.equal(line.pid, process.pid, "the root logger's bindings");
    assert.equal(typeof line.hostname, 'string');
    assert.equal(line.request_id, response.headers['x-request-id']);
    assert.match(String(line.trace_id), /^[0-9a-f]{32}$/);
    assert.deepEqual(line.req, {
      method: 'GET',
      url: '/v1/billing/invoices?page=1&per_page=5&access_token=[redacted]',
      remote_address: '127.0.0.1',
      client_request_id: 'client-7',
    });
    assert.deepEqual(line.res, { statusCode: response.statusCode });
    assert.equal(typeof line.responseTime, 'number');
    assert.equal(line.msg, 'request completed');
    const text = gw.logs.join('');
    // The secret read as the gateway reads it: it may hold '_' itself, so splitting the key on '_'
    // could leave a fragment of a character or two, which a log line holds by chance.
    const secret = parseApiKey(key)?.secret as string;
    assert.equal(secret.length, 43);
    assert.ok(!text.includes(key) && !text.includes(secret.slice(0, 16)), 'the key never reaches the log, nor the start of its secret');
    assert.ok(!text.includes('abc123'), 'nor a query value');
  } finally {
    await gw.close();
  }
});

t.test('a key or token sent as a bare query parameter name, or in the path, never reaches the log', async () => {
  const gw = await buildTestGateway();
  try {
    const key = gw.keys['acme:all'] as string;
    const token = 'rgadm_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG';
    const urls: Array<[sent: string, logged: string]> = [
      [`/v1/me?${key}`, '/v1/me?[redacted]'],
      [`/v1/me?foo=1&${key}`, '/v1/me?foo=[redacted]&[redacted]'],
      [`/v1/services?page=2&${token}=`, '/v1/services?page=2&[redacted]'],
      [`/v1/services?${encodeURIComponent(key)}=x`, '/v1/services?[redacted]'],
      // Pasted into the path, in place of an id or after a stray slash.
      [`/v1/services/${key}/credentials`, '/v1/services/[redacted]/credentials'],
      [`/v1/services/7/${token}?page=1`, '/v1/services/7/[redacted]?page=1'],
      [`/admin/v1/keys/x-${token}`, '/admin/v1/keys/[redacted]'],
      [`/v1/services/x%20${key}`, '/v1/services/[redacted]'],
      // Percent-encoded, in part or whole: the router decodes it, and so does whoever reads the log.
      [`/v1/services/${key.replace(/_/g, '%5F')}`, '/v1/services/[redacted]'],
      [`/v1/services/7/${[...token].map((char) => `%${char.charCodeAt(0).toString(16).padStart(2, '0')}`).join('')}`, '/v1/services/7/[redacted]'],
      ['/v1/services/park_7', '/v1/services/park_7'],
      ['/v1/services/acme_rk_1', '/v1/services/acme_rk_1'],
    ];
    for (const [url] of urls) {
      const response = await gw.app.inject({ method: 'GET', url });
      assert.ok(response.statusCode >= 400, `${url} is refused`);
    }
    assert.deepEqual(accessLines(gw.logs).map((line) => (line.req as { url: string }).url), urls.map(([, logged]) => logged));
    const secret = parseApiKey(key)?.secret as string;
    const text = gw.logs.join('');
    for (const fragment of [key, secret.slice(0, 16), token.slice(6, 22)]) assert.ok(!text.includes(fragment), 'no line holds the key, its secret or the token');
  } finally {
    await gw.close();
  }
});

t.test('no line below its level', async () => {
  const gw = await buildTestGateway({ config: { logLevel: 'warn' } });
  try {
    await gw.app.inject({ method: 'GET', url: '/v1/products', headers: bearer(gw.keys['acme:all'] as string) });
    assert.deepEqual(accessLines(gw.logs), []);
  } finally {
    await gw.close();
  }
});

t.test('the line stays valid JSON whatever the client sends, and leaves out what it did not send', async () => {
  const gw = await buildTestGateway({});
  try {
    const key = gw.keys['acme:all'] as string;
    const odd = 'quote " backslash \\ tab \t unicode é \u2028 end';
    await gw.app.inject({ method: 'GET', url: '/v1/products?page=1', headers: { ...bearer(key), 'x-request-id': odd } });
    await gw.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(key) });
    const [first, second] = accessLines(gw.logs) as [Record<string, Record<string, unknown>>, Record<string, Record<string, unknown>>];
    assert.equal(first.req?.client_request_id, odd);
    assert.equal(first.req?.url, '/v1/products?page=1');
    assert.deepEqual(Object.keys(second.req ?? {}), ['method', 'url', 'remote_address'], 'no client_request_id when none was sent');
    assert.deepEqual(Object.keys(second), ['level', 'time', 'pid', 'hostname', 'request_id', 'trace_id', 'account_id', 'key_id', 'req', 'res', 'responseTime', 'msg']);
  } finally {
    await gw.close();
  }
});

t.test("the access line's text fields are written as JSON.stringify writes them", async () => {
  const texts: string[] = ['', 'GET', '/v1/products?page=2&per_page=[redacted]', '203.0.113.9', '2001:db8::1/64'];
  // Every UTF-16 code unit alone, lone surrogates included, and inside plain text.
  for (let unit = 0; unit <= 0xffff; unit += 1) {
    const char = String.fromCharCode(unit);
    texts.push(char, `/v1/services/${char}`, `${char}"${char}\\`);
  }
  texts.push('😀', '/v1/é/😀', '\ud83d', 'a\u2028b', 'tab\there', '"quoted"', 'back\\slash', '~'.repeat(5_000));
  for (const text of texts) assert.equal(jsonText(text), JSON.stringify(text), JSON.stringify(text));
});

t.test("a refused request's line names the problem's reason and, for a 401, why the key was refused and its id", async () => {
  const gw = await buildTestGateway();
  try {
    const revoked = gw.keys['acme:revoked'] as string;
    const send = (authorization?: string) =>
      gw.app.inject({ method: 'GET', url: '/v1/me', headers: authorization === undefined ? {} : { authorization } });
    await send(`Bearer ${revoked}`);
    await send(`Bearer ${gw.keys['acme:expired']}`);
    await send();
    await send('Basic dXNlcjpwYXNz');
    await send('Bearer not-a-key');
    await gw.app.inject({ method: 'GET', url: '/v1/services/999999', headers: bearer(gw.keys['acme:all']) });
    await gw.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(gw.keys['acme:all']) });
    const lines = accessLines(gw.logs).map((l) => ({ status: (l.res as { statusCode: number }).statusCode, reason: l.reason, auth_failure: l.auth_failure, sent_key_id: l.sent_key_id }));
    assert.deepEqual(lines, [
      { status: 401, reason: 'unauthenticated', auth_failure: 'revoked', sent_key_id: parseApiKey(revoked)?.keyId },
      { status: 401, reason: 'unauthenticated', auth_failure: 'expired', sent_key_id: parseApiKey(gw.keys['acme:expired'] as string)?.keyId },
      { status: 401, reason: 'unauthenticated', auth_failure: 'missing', sent_key_id: undefined },
      { status: 401, reason: 'unauthenticated', auth_failure: 'not_bearer', sent_key_id: undefined },
      { status: 401, reason: 'unauthenticated', auth_failure: 'malformed', sent_key_id: undefined },
      { status: 404, reason: 'not_found', auth_failure: undefined, sent_key_id: undefined },
      { status: 200, reason: undefined, auth_failure: undefined, sent_key_id: undefined },
    ]);
    const secret = parseApiKey(revoked)?.secret as string;
    assert.ok(!gw.logs.join('').includes(secret.slice(0, 16)), "the refused key's secret is not logged");
  } finally {
    await gw.close();
  }
});
