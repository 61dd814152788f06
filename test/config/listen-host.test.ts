/**
 * The schema must refuse what listen cannot take (a port, a
 * scheme, brackets) and nothing Node listens on. z.ipv6() refuses an IPv6 address with a zone id
 * (fe80::1%eth0, which net.isIP and listen take), and z.hostname() a name with '_' (a Docker
 * Compose container name getaddrinfo resolves): both were accepted before and now stop the boot.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { ConfigError } from '../../src/config.js';
import { loadConfig } from '../../src/load-config.js';
import { BACKENDS } from '../../mappings/index.js';

t.test('a listen address Node takes is accepted for host and ops.host', async () => {
  for (const [variable, field] of [['HOST', 'host'], ['OPS_HOST', 'ops.host']] as const) {
    for (const good of ['fe80::1%eth0', 'fe80::1%2', 'app_gateway_1', 'gateway_1.internal', '0.0.0.0', '::', '::ffff:127.0.0.1', 'localhost']) {
      assert.doesNotThrow(() => loadConfig(BACKENDS, { [variable]: good }), `${variable}=${good}`);
    }
    for (const bad of ['gateway:3000', '[::1]', 'http://0.0.0.0', 'two words', '-gateway', 'a..b', 'fe80::1%']) {
      assert.throws(() => loadConfig(BACKENDS, { [variable]: bad }), (error: Error) => error instanceof ConfigError && error.message.includes(`- ${field}: must be an IP address or a host name`), `${variable}=${bad}`);
    }
  }
  assert.equal(loadConfig(BACKENDS, { HOST: 'fe80::1%eth0' }).host, 'fe80::1%eth0');
});
