/**
 * An upstream behind HTTPS with a certificate the gateway does not trust (self-signed, a private
 * CA), or one that redirects http → https: doctor must say so, not send the operator to re-check a
 * URL that is right.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, request as httpRequest } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { BACKENDS } from '../../mappings/index.js';
import { FossbillingConfigSchema } from '../../mappings/fossbilling/config.js';
import { diagnoseFossbilling } from '../../mappings/fossbilling/doctor.js';
import { startFossbillingSimulator } from '../../simulators/fossbilling/server.js';
import { listen, type Listening } from '../../simulators/shared/listen.js';
import { startWhmcsSimulator } from '../../simulators/whmcs/server.js';
import { doctorCli } from '../../src/cli/doctor.js';
import { PROFILE_ACTIONS } from '../../src/v1/schemas.js';
import { doctorEnv } from '../helpers/doctor.js';

const FIXTURES = join(import.meta.dirname, 'fixtures');
const TLS = { key: readFileSync(join(FIXTURES, 'self-signed-key.pem')), cert: readFileSync(join(FIXTURES, 'self-signed-cert.pem')) };

/** HTTPS with a self-signed certificate in front of `target`. */
async function selfSignedProxy(target: string): Promise<Listening> {
  const to = new URL(target);
  const server = createHttpsServer(TLS, (request, response) => {
    const upstream = httpRequest({ host: to.hostname, port: to.port, path: request.url, method: request.method, headers: request.headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    request.pipe(upstream);
  });
  const listening = await listen(server as never, '127.0.0.1', 0);
  return { ...listening, url: listening.url.replace(/^http:/, 'https:') };
}

/** Plain HTTP that sends every request to `to` (as a web server forcing https does). */
async function redirector(to: string): Promise<Listening> {
  const server = createHttpServer((request, response) => {
    request.resume();
    response.writeHead(301, { location: `${to}${request.url ?? '/'}` });
    response.end();
  });
  return listen(server, '127.0.0.1', 0);
}

async function runDoctor(env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const code = await doctorCli(BACKENDS, [], { out: (text) => (stdout += text), err: (text) => (stdout += text), env });
  return { code, stdout };
}

t.test('WHMCS behind HTTPS with a self-signed certificate, or behind an http → https redirect', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-doctor-tls-'));
  const simulator = await startWhmcsSimulator();
  const tls = await selfSignedProxy(simulator.url);
  const redirect = await redirector(tls.url);
  t.teardown(async () => {
    await redirect.close();
    await tls.close();
    await simulator.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const env = doctorEnv(simulator, dir);

  const untrusted = await runDoctor({ ...env, WHMCS_URL: tls.url });
  assert.equal(untrusted.code, 1);
  assert.match(untrusted.stdout, /^FAIL  WHMCS accepts the gateway's API credentials$/m);
  assert.match(untrusted.stdout, /Fix: .*certificate.*NODE_EXTRA_CA_CERTS/, untrusted.stdout);

  const redirected = await runDoctor({ ...env, WHMCS_URL: redirect.url });
  assert.equal(redirected.code, 1);
  assert.match(redirected.stdout, /Fix: .*redirect/i, redirected.stdout);
});

t.test('FOSSBilling behind HTTPS with a self-signed certificate', async (t) => {
  const simulator = await startFossbillingSimulator();
  const tls = await selfSignedProxy(simulator.url);
  t.teardown(async () => {
    await tls.close();
    await simulator.close();
  });
  const config = FossbillingConfigSchema.parse({ url: tls.url, apiToken: simulator.apiToken });
  const [credentials] = await diagnoseFossbilling(config, { serviceActions: PROFILE_ACTIONS.A });
  assert.equal(credentials?.status, 'fail');
  assert.match(credentials?.fix ?? '', /certificate.*NODE_EXTRA_CA_CERTS/, credentials?.fix);
});
