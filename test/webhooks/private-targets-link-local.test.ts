/**
 * `webhooks.allowPrivateTargets` (the sandbox's, for a receiver on localhost or the LAN)
 * accepted every address, link-local and cloud metadata ones too: 169.254.169.254 (reference §1.5.2:
 * "AWS, GCP and Azure metadata"), fe80::/10, their IPv4-mapped forms (the reference's warning:
 * `::ffff:169.254.169.254` slips past filters that compare strings), fd00:ec2::254 (AWS IMDS over
 * IPv6) and 100.100.100.200 (Alibaba Cloud). The contract (§6) refuses link-local and metadata
 * targets; the sandbox flag exists for loopback and private receivers only. Both registration
 * (PUT /v1/webhooks) and each delivery (the addresses it connects to) refuse them.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { checkWebhookUrl, type ResolveHost } from '../../src/webhooks/url-policy.js';
import { sendWebhook } from '../../src/webhooks/transport.js';
import { buildTestGateway } from '../helpers/gateway.js';
import { call } from '../helpers/http.js';

const NEVER = [
  'http://169.254.169.254/latest/meta-data/',
  'http://169.254.10.20:8080/',
  'http://[fe80::1]:8080/',
  'http://[febf:ffff::1]/',
  'http://[::ffff:169.254.169.254]/',
  'http://[::ffff:a9fe:1]/',
  'http://[fd00:ec2::254]/',
  'http://100.100.100.200/',
  'http://metadata.google.internal/computeMetadata/v1/',
];
const LOCAL = ['http://127.0.0.1:3999/in', 'http://[::1]:3999/in', 'http://192.168.1.20:8080/in', 'http://10.0.0.5/in', 'http://[fd12:3456::1]/in', 'http://100.64.0.9/in', 'https://hooks.example.com/in'];

const resolver =
  (answers: Record<string, readonly string[]>): ResolveHost =>
  async (host) => {
    const found = answers[host];
    if (!found) throw new Error(`ENOTFOUND ${host}`);
    return found;
  };
const resolve = resolver({
  'hooks.example.com': ['93.184.216.34'],
  'dev.example.com': ['127.0.0.1', '::1'],
  'metadata.example.com': ['169.254.169.254'],
  'mixed.example.com': ['192.168.1.20', '169.254.169.254'],
  'mapped.example.com': ['::ffff:169.254.169.254'],
  'link6.example.com': ['fe80::1'],
  'metadata.google.internal': ['169.254.169.254'],
});

t.test('registration with allowPrivateTargets: link-local and metadata targets refused, loopback and LAN accepted', async () => {
  for (const url of NEVER) {
    const verdict = await checkWebhookUrl(url, { allowPrivateTargets: true, resolve });
    assert.equal(verdict.ok, false, `${url} is refused`);
  }
  for (const host of ['metadata.example.com', 'mixed.example.com', 'mapped.example.com', 'link6.example.com']) {
    const verdict = await checkWebhookUrl(`http://${host}:8080/in`, { allowPrivateTargets: true, resolve });
    assert.equal(verdict.ok, false, `${host} resolves to a link-local address`);
  }
  for (const url of [...LOCAL, 'http://dev.example.com:3999/in']) {
    assert.equal((await checkWebhookUrl(url, { allowPrivateTargets: true, resolve })).ok, true, `${url} is a developer's receiver`);
  }
});

t.test('PUT /v1/webhooks in the sandbox mode answers 422 for a metadata address and stores nothing', async (t) => {
  const gw = await buildTestGateway({ config: { webhooks: { allowPrivateTargets: true } }, resolveHost: resolve as (host: string) => Promise<string[]> });
  t.teardown(() => gw.close());
  const base = await gw.app.listen({ host: '127.0.0.1', port: 0 });
  const key = gw.keys['acme:all'] as string;
  for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[::ffff:169.254.169.254]/', 'http://metadata.example.com/']) {
    const answer = await call(base, 'PUT', '/v1/webhooks', { key, body: { url } });
    assert.equal(answer.status, 422, `${url}: ${answer.text}`);
  }
  assert.equal(await gw.stores.webhooks.get('acme'), null, 'no endpoint set');
  assert.equal((await call(base, 'PUT', '/v1/webhooks', { key, body: { url: 'http://127.0.0.1:3999/in' } })).status, 200, 'loopback still accepted');
});

t.test('delivery with allowPrivateTargets: a link-local or metadata address is never connected to', async () => {
  // Aborted before it starts: an attempt the policy lets through fails here without a connection.
  const options = { resolve, allowPrivateTargets: true, signal: AbortSignal.abort() };
  for (const url of [...NEVER, 'http://metadata.example.com/', 'http://mixed.example.com/', 'http://mapped.example.com/', 'http://link6.example.com/']) {
    const result = await sendWebhook(url, {}, '{}', options);
    assert.equal(result.kind, 'blocked', `${url}: ${JSON.stringify(result)}`);
  }
  for (const url of [...LOCAL, 'http://dev.example.com:3999/in']) {
    const result = await sendWebhook(url, {}, '{}', options);
    assert.notEqual(result.kind, 'blocked', `${url} is a developer's receiver`);
  }
});
