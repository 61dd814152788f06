/**
 * Personal data of the reseller's customers, and log volume, in the gateway's log. The real app,
 * its log captured, over an upstream on a loopback port that answers as WHMCS and FOSSBilling
 * document (answers of test/mappings/*\/fixtures, built from their documentation and source), with
 * recognisable personal data in them. No such value may reach a log line, at any level the
 * gateway writes, while the line still says what failed (the action, the field path, the type
 * expected); and no answer, however large, makes a line larger than a few kilobytes.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import Fastify from 'fastify';
import t from 'tap';
import { buildBackendGateway, type BackendGateway } from '../helpers/backend-gateway.js';
import { loggerOptions } from '../../src/logger.js';
import { bearer, buildTestGateway, type TestGateway } from '../helpers/gateway.js';
import { waitFor } from '../helpers/wait.js';
import * as whmcsAnswers from '../mappings/whmcs/fixtures/answers.js';
import * as fossAnswers from '../mappings/fossbilling/fixtures/answers.js';

/** A customer's personal data, as an upstream holds it. */
const PERSON = {
  firstname: 'Zebedee',
  lastname: 'Quixotic-Marlowe',
  email: 'zebedee.quixotic@privatemail.example',
  address1: '77 Wisteria Lane',
  city: 'Lower Pemberton',
  phonenumber: '+44.7700900123',
  tax_id: 'GB999888777',
};
const PII = Object.values(PERSON);
/** The largest log line any request may write, whatever the upstream answered. */
const MAX_LINE = 8 * 1024;

interface Answer {
  status?: number;
  type?: string;
  body: string | object;
}

/** An upstream on a loopback port: `answer` decides each call by its path and form/JSON body. */
class ScriptedUpstream {
  answer: (path: string, body: string) => Answer = () => ({ status: 404, type: 'text/plain', body: 'not scripted' });
  private readonly server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const { status = 200, type = 'application/json', body } = this.answer(request.url ?? '/', Buffer.concat(chunks).toString('utf8'));
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      response.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(text) });
      response.end(text);
    });
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** WHMCS's answer to GetClientsDetails for client 1 (the recorded one), holding PERSON. */
function clientDetails(changes: Record<string, unknown> = {}) {
  const client = { ...whmcsAnswers.clientDetails.client, ...PERSON, address2: '', state: '', postcode: 'PE1 1AA', countryname: 'United Kingdom' };
  return { ...whmcsAnswers.clientDetails, ...PERSON, client: { ...client, ...changes } };
}

const whmcsAction = (body: string) => new URLSearchParams(body).get('action');

function linesOf(logs: string[]): string[] {
  return logs.join('').split('\n').filter((line) => line.length > 0);
}

/** No line holds any of `values`, and none is longer than MAX_LINE. */
function assertClean(lines: string[], values: readonly string[] = PII): void {
  for (const line of lines) {
    assert.ok(line.length <= MAX_LINE, `a log line of ${line.length} characters: ${line.slice(0, 300)}…`);
    for (const value of values) assert.ok(!line.includes(value), `"${value}" reached the log: ${line.slice(0, 2000)}`);
  }
}

/** The lines written since `from` that are not the access line. */
function failureLines(logs: string[], from: number): string[] {
  return linesOf(logs.slice(from)).filter((line) => !line.includes('"msg":"request completed"'));
}

t.test('WHMCS: what an upstream answer can bring into the log', async (t) => {
  const upstream = new ScriptedUpstream();
  const origin = await upstream.listen();
  const gw: TestGateway = await buildTestGateway({ whmcs: { url: `${origin}/whmcs/` } });
  t.teardown(async () => {
    await gw.close();
    await upstream.close();
  });
  const me = () => gw.app.inject({ method: 'GET', url: '/v1/me', headers: bearer(gw.keys['acme:all']) });
  /** GET /v1/me with GetClientsDetails answered so; its 502, and the lines it wrote. */
  async function meAnswered(answer: Answer): Promise<string[]> {
    upstream.answer = (_path, body) => (whmcsAction(body) === 'GetClientsDetails' ? answer : { body: { result: 'error', message: 'not scripted' } });
    const from = gw.logs.length;
    const response = await me();
    assert.equal(response.statusCode, 502, response.body);
    for (const value of PII) assert.ok(!response.body.includes(value));
    // The access line goes out with the response; the failure line before it.
    return linesOf(gw.logs.slice(from));
  }

  t.test('the untouched answer is served (the fake answers as WHMCS does)', async () => {
    upstream.answer = () => ({ body: clientDetails() });
    const response = await me();
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.json().account.email, PERSON.email);
    assertClean(linesOf(gw.logs));
  });

  t.test('a field of the wrong type: the action, the path and the types, no value', async () => {
    const lines = await meAnswered({ body: clientDetails({ currency_code: 840, status: `Prospect ${PERSON.email}` }) });
    assertClean(lines);
    const failure = lines.find((line) => line.includes('upstream failure'));
    assert.ok(failure, 'the failure is logged');
    assert.match(failure, /GetClientsDetails answer has an unexpected shape/);
    assert.match(failure, /client\.currency_code: Invalid input: expected string, received number/);
    assert.match(failure, /client\.status: unknown value/);
  });

  t.test('a personal field of the wrong type (an object): its path, not its content', async () => {
    const lines = await meAnswered({ body: clientDetails({ email: { address: PERSON.email, name: PERSON.firstname } }) });
    assertClean(lines);
    assert.ok(lines.some((line) => /client\.email: Invalid input: expected string, received object/.test(line)));
  });

  t.test('JSON cut off: its size, not its text', async () => {
    const text = JSON.stringify(clientDetails());
    const lines = await meAnswered({ body: text.slice(0, text.length - 40) });
    assertClean(lines);
    assert.ok(lines.some((line) => /GetClientsDetails: not a JSON object: \d+ bytes of JSON-like text/.test(line)));
  });

  t.test('an HTML error page quoting a customer: the page, without the email address', async () => {
    const page = `<html><body><h1>Database error</h1><p>SQLSTATE[23000]: Duplicate entry '${PERSON.email}' for key 'email'</p></body></html>`;
    const lines = await meAnswered({ status: 500, type: 'text/html', body: page });
    assertClean(lines, [PERSON.email]);
    assert.ok(lines.some((line) => line.includes('GetClientsDetails: HTTP 500') && line.includes('SQLSTATE[23000]: Duplicate entry')));
  });

  t.test('a result "error" whose message echoes an email address: the message, without it', async () => {
    // WHMCS passes a module's or hook's own text on as the message (WHMCS facts §2: "<module error text>").
    const message = `Client ${PERSON.email} could not be loaded: SQLSTATE[23000] Duplicate entry '${PERSON.email}'`;
    const lines = await meAnswered({ body: { result: 'error', message } });
    assertClean(lines, [PERSON.email]);
    assert.ok(lines.some((line) => line.includes('WHMCS GetClientsDetails failed: Client ') && line.includes('could not be loaded')));
  });

  t.test('a 1 MB error message: one line of a few kilobytes, cut with a marker', async () => {
    const lines = await meAnswered({ body: { result: 'error', message: `Module says: ${'x'.repeat(1024 * 1024)}` } });
    assertClean(lines);
    const failure = lines.find((line) => line.includes('upstream failure'));
    assert.ok(failure?.includes('WHMCS GetClientsDetails failed: Module says: xxx'));
    assert.match(failure as string, /… \[cut, \d+ characters\]/);
  });

  t.test('a 4 MB answer that fails parsing: one short line', async () => {
    const lines = await meAnswered({ body: clientDetails({ currency_code: null, notes: 'n'.repeat(4 * 1024 * 1024) }) });
    assertClean(lines);
    assert.ok(lines.some((line) => line.includes('client.currency_code')));
  });

  t.test('a 1 MB HTML page with a 2 MB line: an excerpt', async () => {
    const lines = await meAnswered({ status: 502, type: 'text/html', body: `<html>${'y'.repeat(2 * 1024 * 1024)}</html>` });
    assertClean(lines);
  });
});

t.test('WHMCS: the change detector, over an upstream that fails every read with a huge message', async (t) => {
  const upstream = new ScriptedUpstream();
  const origin = await upstream.listen();
  const gw: TestGateway = await buildTestGateway({
    whmcs: { url: `${origin}/whmcs/` },
    runWebhooks: true,
    // The receiver is this host's port 443, where nothing listens: no delivery leaves the machine.
    resolveHost: async () => ['127.0.0.1'],
    config: { webhooks: { pollIntervalMs: 100, workerIntervalMs: 50, allowPrivateTargets: true } },
  });
  t.teardown(async () => {
    await gw.close();
    await upstream.close();
  });
  const receiverToken = 'tok-8d1f0c4e2b7a';
  upstream.answer = () => ({ body: { result: 'error', message: `Duplicate entry '${PERSON.email}' ${'z'.repeat(1024 * 1024)}` } });
  const put = await gw.app.inject({
    method: 'PUT',
    url: '/v1/webhooks',
    headers: { ...bearer(gw.keys['acme:all']), 'content-type': 'application/json' },
    payload: JSON.stringify({ url: `https://hooks.example.com/in?token=${receiverToken}` }),
  });
  assert.equal(put.statusCode, 200, put.body);
  await waitFor(() => (gw.logs.join('').includes('webhook change detection failed') ? true : undefined), 5000, 'a failed detection pass');
  const lines = failureLines(gw.logs, 0);
  const failed = lines.filter((line) => line.includes('webhook change detection failed'));
  assert.ok(failed.length > 0, 'the detector logged its failure');
  assertClean(lines, [PERSON.email, receiverToken]);
  // Still says what failed.
  assert.ok(failed.some((line) => line.includes('WHMCS') && line.includes('failed: Duplicate entry')));
});

t.test('FOSSBilling: error envelopes and answers of the wrong shape', async (t) => {
  const upstream = new ScriptedUpstream();
  const origin = await upstream.listen();
  const gw: BackendGateway = await buildBackendGateway('fossbilling', { profile: 'A', backendConfig: { url: `${origin}/` } });
  t.teardown(() => gw.close());
  t.teardown(() => upstream.close());
  const person = { ...fossAnswers.client, first_name: PERSON.firstname, last_name: PERSON.lastname, email: PERSON.email, address_1: PERSON.address1, phone: PERSON.phonenumber, company_vat: PERSON.tax_id };
  async function meAnswered(result: (path: string) => Answer): Promise<string[]> {
    upstream.answer = (path) => result(path);
    const from = gw.logs.length;
    const response = await fetch(`${gw.base}/v1/me`, { headers: bearer(gw.keys['acme:all']) as Record<string, string> });
    const body = await response.text();
    assert.equal(response.status, 502, body);
    return linesOf(gw.logs.slice(from));
  }

  t.test('the untouched answer is served', async () => {
    upstream.answer = () => ({ body: { result: { ...person, id: Number(gw.upstream.customerIds[0]) }, error: null } });
    const response = await fetch(`${gw.base}/v1/me`, { headers: bearer(gw.keys['acme:all']) as Record<string, string> });
    assert.equal(response.status, 200, await response.text());
  });

  t.test('an error message with an email address (FOSSBilling interpolates them: ":email is already registered")', async () => {
    const lines = await meAnswered(() => ({ body: { result: null, error: { message: `Client with email ${PERSON.email} is locked`, code: 9999 } } }));
    assertClean(lines, [PERSON.email]);
    assert.ok(lines.some((line) => line.includes('FOSSBilling client/get: error 9999: Client with email') && line.includes('is locked')));
  });

  t.test('an error message of 1 MB: cut', async () => {
    const lines = await meAnswered(() => ({ body: { result: null, error: { message: 'w'.repeat(1024 * 1024), code: 9999 } } }));
    assertClean(lines);
    assert.ok(lines.some((line) => /… \[cut, \d+ characters\]/.test(line)));
  });

  t.test('a client of the wrong shape: the path, not the values', async () => {
    const lines = await meAnswered(() => ({ body: { result: { ...person, id: Number(gw.upstream.customerIds[0]), balance: { amount: PERSON.tax_id } }, error: null } }));
    assertClean(lines);
    assert.ok(lines.some((line) => line.includes('FOSSBilling client/get: unexpected answer: balance')));
  });
});

t.test('v1 upstream: problem details and answers not the contract\'s', async (t) => {
  const upstream = new ScriptedUpstream();
  const origin = await upstream.listen();
  const gw: BackendGateway = await buildBackendGateway('v1', { profile: 'A', backendConfig: { url: origin } });
  t.teardown(() => gw.close());
  t.teardown(() => upstream.close());
  async function meAnswered(answer: Answer): Promise<string[]> {
    upstream.answer = () => answer;
    const from = gw.logs.length;
    const response = await fetch(`${gw.base}/v1/me`, { headers: bearer(gw.keys['acme:all']) as Record<string, string> });
    const body = await response.text();
    assert.equal(response.status, 502, body);
    for (const value of PII) assert.ok(!body.includes(value));
    return linesOf(gw.logs.slice(from));
  }

  t.test('a problem whose detail quotes an email address', async () => {
    const detail = `The billing system refused client ${PERSON.email}.`;
    const lines = await meAnswered({ status: 502, type: 'application/problem+json', body: { type: 'about:blank', title: 'Upstream error', status: 502, reason: 'upstream_error', detail } });
    assertClean(lines, [PERSON.email]);
    assert.ok(lines.some((line) => line.includes('v1 upstream getMe: 502 upstream_error: The billing system refused client')));
  });

  t.test('an account of the wrong shape: the path and type, not the values', async () => {
    const account = { id: gw.upstream.customerIds[0], name: `${PERSON.firstname} ${PERSON.lastname}`, company: null, email: 42, status: 'active', currency: 'EUR' };
    const lines = await meAnswered({ body: { account, key: { id: PERSON.tax_id } } });
    assertClean(lines);
    assert.ok(lines.some((line) => line.includes('account.email: Invalid input: expected string, received number')));
  });
});

t.test('the app\'s logger: an error whose cause chain and stack are huge, a huge message and field', async (t) => {
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const app = Fastify({ logger: loggerOptions({ logLevel: 'info' }, stream) });
  t.teardown(() => app.close());
  const cause = new Error(`upstream said: ${PERSON.email} ${'c'.repeat(1024 * 1024)}`);
  const error = Object.assign(new Error('read failed', { cause }), { upstreamMessage: 'u'.repeat(1024 * 1024) });
  error.stack = `Error: read failed\n${'    at frame (file.ts:1:1)\n'.repeat(10_000)}`;
  app.log.error({ err: error, account_id: 'acme' }, 'webhook change detection failed');
  app.log.warn({ action: 'GetInvoice', error: `${PERSON.email} ${'e'.repeat(1024 * 1024)}`, nested: { text: 'n'.repeat(1024 * 1024) } }, 'refresh failed');
  app.log.error(`doctor: FAIL ${'d'.repeat(1024 * 1024)}`);
  const lines = linesOf(logs);
  assert.equal(lines.length, 3);
  assertClean(lines, [PERSON.email]);
  const [first, second, third] = lines.map((line) => JSON.parse(line));
  assert.equal(first.err.type, 'Error');
  assert.match(first.err.message, /^read failed: upstream said: \[email\] c+… \[cut, \d+ characters\]$/);
  assert.match(first.err.stack, /^Error: read failed\n {4}at frame/);
  assert.match(first.err.upstreamMessage, /^u+… \[cut, 1048576 characters\]$/);
  assert.equal(first.account_id, 'acme');
  assert.match(second.error, /^\[email\] e+… \[cut/);
  assert.match(second.nested.text, /^n+… \[cut/);
  assert.equal(second.action, 'GetInvoice');
  assert.match(third.msg, /^doctor: FAIL d+… \[cut/);
});
