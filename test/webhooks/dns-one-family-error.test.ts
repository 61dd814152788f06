/**
 * A name server that answers A but fails AAAA with an error code (SERVFAIL, NOTIMP, REFUSED: the
 * broken-AAAA behaviours of RFC 4074 §4, still met behind some load balancers and DNSSEC-broken
 * zones). Delivery connects only to an address it checked (transport.ts), so the IPv4 answer is
 * enough, exactly as when the AAAA query times out (dns-resolver.test.ts). Refusing it instead
 * 422s the reseller's URL at registration, and at delivery fails every attempt until the endpoint
 * is disabled. Name servers run on 127.0.0.1 in the test; no external network.
 */
import assert from 'node:assert/strict';
import { createSocket, type Socket } from 'node:dgram';
import t from 'tap';
import { checkWebhookUrl, dnsResolver } from '../../src/webhooks/url-policy.js';

const TYPE_A = 1;
const RCODES = { SERVFAIL: 2, NOTIMP: 4, REFUSED: 5 } as const;

function question(query: Buffer): { bytes: Buffer; type: number } {
  let offset = 12;
  while ((query[offset] as number) !== 0) offset += (query[offset] as number) + 1;
  return { bytes: query.subarray(12, offset + 5), type: query.readUInt16BE(offset + 1) };
}

/** A answered with `ipv4` (every type with `rcode` when null); any other type answered with `rcode` and no records. */
function answer(query: Buffer, ipv4: string | null, rcode: number): Buffer {
  const { bytes, type: asked } = question(query);
  const type = ipv4 === null ? -1 : asked;
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2);
  header.writeUInt16BE(type === TYPE_A ? 0x8180 : 0x8180 | rcode, 2);
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(type === TYPE_A ? 1 : 0, 6);
  if (type !== TYPE_A) return Buffer.concat([header, bytes]);
  const record = Buffer.alloc(16);
  record.writeUInt16BE(0xc00c, 0);
  record.writeUInt16BE(TYPE_A, 2);
  record.writeUInt16BE(1, 4);
  record.writeUInt32BE(60, 6);
  record.writeUInt16BE(4, 10);
  (ipv4 as string).split('.').forEach((part, index) => record.writeUInt8(Number(part), 12 + index));
  return Buffer.concat([header, bytes, record]);
}

async function nameServer(ipv4: string | null, rcode: number): Promise<{ address: string; close(): Promise<void> }> {
  const socket: Socket = createSocket('udp4');
  socket.on('message', (query, peer) => socket.send(answer(query, ipv4, rcode), peer.port, peer.address));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { address: `127.0.0.1:${socket.address().port}`, close: () => new Promise<void>((resolve) => socket.close(() => resolve())) };
}

for (const [name, rcode] of Object.entries(RCODES)) {
  t.test(`AAAA answered ${name}, A answered: the IPv4 addresses are the answer`, async (t) => {
    const server = await nameServer('93.184.215.14', rcode);
    t.teardown(() => server.close());
    const resolve = dnsResolver({ servers: [server.address], timeoutMs: 200, tries: 1 });
    assert.deepEqual(await resolve('hooks.example.com'), ['93.184.215.14']);
    assert.deepEqual(await checkWebhookUrl('https://hooks.example.com/in', { resolve }), { ok: true, url: new URL('https://hooks.example.com/in') });
  });
}

t.test('both families failing is still a failure; a non-public A is still refused', async (t) => {
  const failing = await nameServer(null, RCODES.SERVFAIL);
  const privateA = await nameServer('10.0.0.7', RCODES.SERVFAIL);
  t.teardown(() => Promise.all([failing.close(), privateA.close()]));
  const resolveFailing = dnsResolver({ servers: [failing.address], timeoutMs: 200, tries: 1 });
  await assert.rejects(resolveFailing('hooks.example.com'), { code: 'ESERVFAIL' });
  assert.deepEqual(await checkWebhookUrl('https://hooks.example.com/in', { resolve: resolveFailing }), { ok: false, reason: 'URL host could not be resolved' });
  const resolvePrivate = dnsResolver({ servers: [privateA.address], timeoutMs: 200, tries: 1 });
  assert.deepEqual(await checkWebhookUrl('https://hooks.example.com/in', { resolve: resolvePrivate }), {
    ok: false,
    reason: 'URL host resolves to a non-public address',
  });
});
