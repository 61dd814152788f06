/**
 * The DNS lookup of webhook registration: c-ares (not the libuv thread pool the audit log writes
 * through), bounded in time. Name servers run in the test on 127.0.0.1: one answers, one never
 * does. No external network.
 */
import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import t from 'tap';
import { checkWebhookUrl, dnsResolver } from '../../src/webhooks/url-policy.js';
import { bearer, buildTestGateway } from '../helpers/gateway.js';

const TYPE_A = 1;

/** The question section of a query: from after the header to the end of QTYPE and QCLASS. */
function question(query: Buffer): { bytes: Buffer; type: number } {
  let offset = 12;
  while ((query[offset] as number) !== 0) offset += (query[offset] as number) + 1;
  return { bytes: query.subarray(12, offset + 5), type: query.readUInt16BE(offset + 1) };
}

/** Answers every A query with `ipv4` and every other type with no records (NODATA). */
function answer(query: Buffer, ipv4: string): Buffer {
  const { bytes, type } = question(query);
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2);
  header.writeUInt16BE(0x8180, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(type === TYPE_A ? 1 : 0, 6);
  if (type !== TYPE_A) return Buffer.concat([header, bytes]);
  const record = Buffer.alloc(16);
  record.writeUInt16BE(0xc00c, 0);
  record.writeUInt16BE(TYPE_A, 2);
  record.writeUInt16BE(1, 4);
  record.writeUInt32BE(60, 6);
  record.writeUInt16BE(4, 10);
  ipv4.split('.').forEach((part, index) => record.writeUInt8(Number(part), 12 + index));
  return Buffer.concat([header, bytes, record]);
}

interface NameServer {
  address: string;
  queries: number;
  close(): Promise<void>;
}

/**
 * A UDP name server on 127.0.0.1; with no `ipv4` it reads every query and answers none; with
 * `onlyA`, it answers A queries and drops the others (a server or middlebox that loses AAAA).
 */
async function nameServer(ipv4?: string, onlyA = false): Promise<NameServer> {
  const socket: Socket = createSocket('udp4');
  const server = { address: '', queries: 0, close: () => new Promise<void>((resolve) => socket.close(() => resolve())) };
  socket.on('message', (query, peer) => {
    server.queries += 1;
    if (ipv4 === undefined || (onlyA && question(query).type !== TYPE_A)) return;
    socket.send(answer(query, ipv4), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  server.address = `127.0.0.1:${socket.address().port}`;
  return server;
}

t.test('webhook DNS lookups', async (t) => {
  let silent: NameServer;
  let publicAnswers: NameServer;
  let privateAnswers: NameServer;
  let losesAAAA: NameServer;
  t.before(async () => {
    [silent, publicAnswers, privateAnswers, losesAAAA] = await Promise.all([nameServer(), nameServer('93.184.215.14'), nameServer('10.0.0.7'), nameServer('93.184.215.14', true)]);
  });
  t.teardown(() => Promise.all([silent.close(), publicAnswers.close(), privateAnswers.close(), losesAAAA.close()]));

  const resolverOf = (server: NameServer) => dnsResolver({ servers: [server.address], timeoutMs: 100, tries: 1 });

  t.test('resolve through the configured name servers', async () => {
    assert.deepEqual(await resolverOf(publicAnswers)('hooks.example.com'), ['93.184.215.14']);
    assert.deepEqual(await checkWebhookUrl('https://hooks.example.com/in', { resolve: resolverOf(publicAnswers) }), {
      ok: true,
      url: new URL('https://hooks.example.com/in'),
    });
    assert.deepEqual(await checkWebhookUrl('https://hooks.example.com/in', { resolve: resolverOf(privateAnswers) }), {
      ok: false,
      reason: 'URL host resolves to a non-public address',
    });
  });

  t.test('a name server that never answers: the lookup ends with a clear refusal', async () => {
    const before = silent.queries;
    const result = await checkWebhookUrl('https://hooks.example.com/in', { resolve: resolverOf(silent) });
    assert.deepEqual(result, { ok: false, reason: 'URL host could not be resolved in time; try again' });
    assert.ok(silent.queries > before, 'the lookup went to the configured server');
  });

  // Delivery connects only to an address it checked (transport.ts pins it), so the family that
  // answered is enough; an endpoint whose AAAA queries are lost was refused, then disabled.
  t.test('AAAA lost, A answered: the IPv4 addresses are the answer', async () => {
    assert.deepEqual(await resolverOf(losesAAAA)('hooks.example.com'), ['93.184.215.14']);
    assert.deepEqual(await checkWebhookUrl('https://hooks.example.com/in', { resolve: resolverOf(losesAAAA) }), { ok: true, url: new URL('https://hooks.example.com/in') });
  });

  t.test('through the gateway: 422 naming the URL, and nothing is stored', async () => {
    const gw = await buildTestGateway({ resolveHost: resolverOf(silent) });
    try {
      const headers = { ...bearer(gw.keys['acme:all']), 'content-type': 'application/json' };
      const put = await gw.app.inject({ method: 'PUT', url: '/v1/webhooks', headers, payload: { url: 'https://hooks.example.com/in' } });
      assert.equal(put.statusCode, 422, put.body);
      assert.equal(put.json().reason, 'validation_failed');
      assert.deepEqual(put.json().errors, [{ pointer: '/url', detail: 'URL host could not be resolved in time; try again' }]);
      const read = await gw.app.inject({ method: 'GET', url: '/v1/webhooks', headers: bearer(gw.keys['acme:all']) });
      assert.equal(read.json().url, null);
    } finally {
      await gw.close();
    }
  });
});
