import t from 'tap';
import assert from 'node:assert/strict';
import { checkWebhookUrl, isPublicAddress, MAX_WEBHOOK_URL_LENGTH, type ResolveHost } from '../../src/webhooks/url-policy.js';

const ACCEPTED: Array<[url: string, href: string]> = [
  ['https://hooks.example.com/whmcs', 'https://hooks.example.com/whmcs'],
  ['https://hooks.example.com:443/x', 'https://hooks.example.com/x'],
  ['https://HOOKS.Example.COM./in', 'https://hooks.example.com./in'],
  ['https://münchen.example/', 'https://xn--mnchen-3ya.example/'],
  ['https://my_hooks.example.com/', 'https://my_hooks.example.com/'],
  ['https://8.8.8.8/hook', 'https://8.8.8.8/hook'],
  ['https://[2606:4700::1111]/hook', 'https://[2606:4700::1111]/hook'],
  ['https://[::ffff:8.8.8.8]/hook', 'https://[::ffff:808:808]/hook'],
];

const REJECTED: Array<[url: string, reason: RegExp, why: string]> = [
  ['', /not a valid absolute URL/, 'empty'],
  ['hooks.example.com/x', /not a valid absolute URL/, 'relative'],
  ['https://', /not a valid absolute URL/, 'no host'],
  ['https:///x', /fully qualified/, 'no authority: the path becomes a single-label host'],
  ['http://hooks.example.com/', /must use https/, 'plain http'],
  ['ftp://hooks.example.com/', /must use https/, 'other scheme'],
  ['HTTP://hooks.example.com/', /must use https/, 'upper-case http'],
  ['https://user@hooks.example.com/', /username or password/, 'username'],
  ['https://user:secret@hooks.example.com/', /username or password/, 'username and password'],
  ['https://:secret@hooks.example.com/', /username or password/, 'password only'],
  ['https://hooks.example.com/#frag', /fragment/, 'fragment'],
  [`https://hooks.example.com/${'a'.repeat(MAX_WEBHOOK_URL_LENGTH)}`, /at most 2048/, 'too long'],
  [`https://hooks.example.com/${'é'.repeat(1000)}`, /at most 2048/, 'too long once percent-encoded'],
  [' https://hooks.example.com/', /spaces or control/, 'leading space'],
  ['https://hooks.exa\tmple.com/', /spaces or control/, 'tab stripped by the parser'],
  ['https://hooks.example.com/\n', /spaces or control/, 'newline'],
  ['https://hooks.example.com:80/', /port must be 443/, 'port 80'],
  ['https://hooks.example.com:22/', /port must be 443/, 'port 22'],
  ['https://hooks.example.com:1023/', /port must be 443/, 'privileged port'],
  ['https://hooks.example.com:0/', /port must be 443/, 'port 0'],
  // Reference S1: 443 only unless configured (webhooks.allowedPorts).
  ['https://hooks.example.com:8443/', /^URL port must be 443$/, 'port 8443, not configured'],
  ['https://hooks.example.com:1024/', /port must be 443/, 'unprivileged port'],
  ['https://hooks.example.com:65535/', /port must be 443/, 'highest port'],
  ['https://hooks.example.com:65536/', /not a valid absolute URL/, 'port out of range'],
  // IPv4 literals, including the spellings WHATWG URL normalises to dotted decimal.
  ['https://127.0.0.1/', /non-public/, 'loopback'],
  ['https://127.1/', /non-public/, 'short loopback'],
  ['https://2130706433/', /non-public/, 'decimal loopback'],
  ['https://017700000001/', /non-public/, 'octal loopback'],
  ['https://0x7f.1/', /non-public/, 'hex loopback'],
  ['https://0x7f000001/', /non-public/, 'hex loopback, one part'],
  ['https://127.0.0.1./', /non-public/, 'loopback with trailing dot'],
  ['https://0300.0250.0.1/', /non-public/, 'octal private'],
  ['https://10.0.0.1/', /non-public/, 'private 10/8'],
  ['https://172.16.0.1/', /non-public/, 'private 172.16/12'],
  ['https://172.31.255.255/', /non-public/, 'private 172.16/12, top'],
  ['https://192.168.1.1/', /non-public/, 'private 192.168/16'],
  ['https://169.254.169.254/latest/meta-data/', /non-public/, 'metadata'],
  ['https://169.254.1.1/', /non-public/, 'link-local'],
  ['https://100.64.0.1/', /non-public/, 'CGNAT'],
  ['https://100.100.100.200/', /non-public/, 'Alibaba metadata in CGNAT'],
  ['https://0.0.0.0/', /non-public/, 'unspecified'],
  ['https://0/', /non-public/, 'unspecified, one digit'],
  ['https://255.255.255.255/', /non-public/, 'broadcast'],
  ['https://224.0.0.1/', /non-public/, 'multicast'],
  ['https://240.0.0.1/', /non-public/, 'reserved class E'],
  ['https://192.0.0.1/', /non-public/, 'IETF protocol assignments'],
  ['https://198.18.0.1/', /non-public/, 'benchmarking'],
  ['https://192.0.2.1/', /non-public/, 'TEST-NET-1'],
  ['https://198.51.100.1/', /non-public/, 'TEST-NET-2'],
  ['https://203.0.113.1/', /non-public/, 'TEST-NET-3'],
  // IPv6 literals.
  ['https://[::1]/', /non-public/, 'IPv6 loopback'],
  ['https://[::]/', /non-public/, 'IPv6 unspecified'],
  ['https://[::ffff:127.0.0.1]/', /non-public/, 'IPv4-mapped loopback'],
  ['https://[::ffff:7f00:1]/', /non-public/, 'IPv4-mapped loopback, hex'],
  ['https://[0:0:0:0:0:ffff:a9fe:a9fe]/', /non-public/, 'IPv4-mapped metadata'],
  ['https://[::127.0.0.1]/', /non-public/, 'IPv4-compatible loopback'],
  ['https://[::ffff:0:7f00:1]/', /non-public/, 'IPv4-translated loopback'],
  ['https://[fe80::1]/', /non-public/, 'IPv6 link-local'],
  ['https://[fe80::1%25eth0]/', /not a valid absolute URL/, 'zone id'],
  ['https://[fc00::1]/', /non-public/, 'unique-local'],
  ['https://[fd00:ec2::254]/', /non-public/, 'AWS IMDS over IPv6'],
  ['https://[fec0::1]/', /non-public/, 'deprecated site-local'],
  ['https://[ff02::1]/', /non-public/, 'IPv6 multicast'],
  ['https://[2001:db8::1]/', /non-public/, 'IPv6 documentation'],
  ['https://[64:ff9b::a9fe:a9fe]/', /non-public/, 'NAT64 of metadata'],
  ['https://[64:ff9b::10.0.0.1]/', /non-public/, 'NAT64 of private'],
  ['https://[2002:a9fe:a9fe::1]/', /non-public/, '6to4 of metadata'],
  ['https://[2002:7f00:1::1]/', /non-public/, '6to4 of loopback'],
  ['https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/', /non-public/, 'Teredo'],
  ['https://[100::1]/', /non-public/, 'discard prefix'],
  // Host names.
  ['https://localhost/', /local or internal/, 'localhost'],
  ['https://localhost./', /local or internal/, 'localhost with trailing dot'],
  ['https://LOCALHOST:443/', /local or internal/, 'upper-case localhost'],
  ['https://%6c%6fcalhost/', /local or internal/, 'percent-encoded localhost'],
  ['https://ｌｏｃａｌｈｏｓｔ/', /local or internal/, 'full-width localhost'],
  ['https://api.localhost/', /local or internal/, '*.localhost'],
  ['https://printer.local/', /local or internal/, '*.local'],
  ['https://db.corp.internal/', /local or internal/, '*.internal'],
  ['https://metadata.google.internal/computeMetadata/v1/', /local or internal/, 'GCP metadata'],
  ['https://metadata/', /local or internal/, 'metadata'],
  ['https://router.home.arpa/', /local or internal/, 'home.arpa'],
  ['https://intranet/', /fully qualified/, 'single label'],
  ['https://intranet./', /fully qualified/, 'single label with trailing dot'],
  ['https://.example.com/', /not a valid host name/, 'empty label'],
  ['https://example.com../', /not a valid host name/, 'two trailing dots'],
  ['https://ex*ample.com/', /not a valid host name/, 'asterisk'],
  ['https://-hooks.example.com/', /not a valid host name/, 'leading hyphen'],
  [`https://${'a'.repeat(64)}.example.com/`, /not a valid host name/, 'label over 63'],
];

t.test('checkWebhookUrl', async (t) => {
  for (const [raw, href] of ACCEPTED) {
    t.test(`accepts ${raw}`, async () => {
      const result = await checkWebhookUrl(raw);
      assert.ok(result.ok, `expected ${raw} to be accepted, got ${JSON.stringify(result)}`);
      assert.equal(result.url.href, href);
    });
  }

  for (const [raw, reason, why] of REJECTED) {
    t.test(`rejects ${why}: ${JSON.stringify(raw.length > 80 ? `${raw.slice(0, 80)}…` : raw)}`, async () => {
      const result = await checkWebhookUrl(raw);
      assert.equal(result.ok, false, `expected ${JSON.stringify(raw)} to be rejected`);
      if (!result.ok) assert.match(result.reason, reason);
    });
  }

  t.test('gives short sentences without echoing the URL', async () => {
    const result = await checkWebhookUrl('https://user:hunter2@hooks.example.com/');
    assert.deepEqual(result, { ok: false, reason: 'URL must not contain a username or password' });
  });
});

t.test('checkWebhookUrl with allowed ports', async () => {
  const allowedPorts = [443, 8443];
  const accepted = await checkWebhookUrl('https://hooks.example.com:8443/x?token=abc', { allowedPorts });
  assert.equal(accepted.ok && accepted.url.href, 'https://hooks.example.com:8443/x?token=abc');
  assert.equal((await checkWebhookUrl('https://hooks.example.com/x', { allowedPorts })).ok, true, 'no port: 443');
  assert.deepEqual(await checkWebhookUrl('https://hooks.example.com:9443/', { allowedPorts }), { ok: false, reason: 'URL port must be one of 443, 8443' });
  assert.deepEqual(await checkWebhookUrl('https://hooks.example.com/', { allowedPorts: [8443] }), { ok: false, reason: 'URL port must be 8443' });
  // The sandbox's receivers listen on any port of 127.0.0.1.
  assert.equal((await checkWebhookUrl('http://127.0.0.1:3999/in', { allowPrivateTargets: true })).ok, true);
});

t.test('checkWebhookUrl with a resolver', async (t) => {
  const resolverOf =
    (answers: Record<string, readonly string[]>): ResolveHost =>
    async (host) => {
      const addresses = answers[host];
      if (addresses === undefined) throw new Error(`ENOTFOUND ${host}`);
      return addresses;
    };
  const resolve = resolverOf({
    'hooks.example.com': ['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946'],
    'internal.example.com': ['10.0.0.1'],
    'mixed.example.com': ['93.184.216.34', '127.0.0.1'],
    'mapped.example.com': ['::ffff:169.254.169.254'],
    'rebind.example.com': ['fd00:ec2::254'],
    'empty.example.com': [],
  });

  t.test('accepts a host whose every address is public', async () => {
    const result = await checkWebhookUrl('https://hooks.example.com/in', { resolve });
    assert.equal(result.ok, true);
  });

  for (const host of ['internal.example.com', 'mixed.example.com', 'mapped.example.com', 'rebind.example.com']) {
    t.test(`rejects ${host}, which resolves to a non-public address`, async () => {
      const result = await checkWebhookUrl(`https://${host}/in`, { resolve });
      assert.deepEqual(result, { ok: false, reason: 'URL host resolves to a non-public address' });
    });
  }

  t.test('rejects a host that does not resolve, or resolves to nothing', async () => {
    for (const host of ['missing.example.com', 'empty.example.com']) {
      const result = await checkWebhookUrl(`https://${host}/`, { resolve });
      assert.deepEqual(result, { ok: false, reason: 'URL host could not be resolved' });
    }
  });

  t.test('does not resolve IP literals or names refused on their own', async () => {
    const asked: string[] = [];
    const spy: ResolveHost = async (host) => {
      asked.push(host);
      return ['93.184.216.34'];
    };
    assert.equal((await checkWebhookUrl('https://8.8.8.8/', { resolve: spy })).ok, true);
    assert.equal((await checkWebhookUrl('https://localhost/', { resolve: spy })).ok, false);
    assert.equal((await checkWebhookUrl('http://hooks.example.com/', { resolve: spy })).ok, false);
    assert.deepEqual(asked, []);
  });
});

t.test('isPublicAddress', async (t) => {
  const publicAddresses = ['8.8.8.8', '93.184.216.34', '1.1.1.1', '2606:4700::1111', '2a00:1450:4001::200e', '::ffff:8.8.8.8'];
  const nonPublic = [
    '127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0',
    '255.255.255.255', '224.0.0.251', '192.0.2.1', '198.51.100.7', '203.0.113.9', '198.19.0.1', '240.0.0.1',
    '::1', '::', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::7f00:1', '::1:2:3', 'fe80::1', 'fe80::1%eth0', 'fc00::1',
    'fd00:ec2::254', 'ff02::1', '2001:db8::1', '64:ff9b::a00:1', '2002:a00:1::1', '2001::1', '2606:4700::1111%eth0',
    // Not addresses at all, or URL-only spellings of one.
    '', 'localhost', '2130706433', '0x7f.1', '127.1', ' 8.8.8.8', '8.8.8.8/32', '[2606:4700::1111]',
  ];
  for (const ip of publicAddresses) t.test(`${ip} is public`, async () => assert.equal(isPublicAddress(ip), true));
  for (const ip of nonPublic) t.test(`${JSON.stringify(ip)} is not public`, async () => assert.equal(isPublicAddress(ip), false));
});
