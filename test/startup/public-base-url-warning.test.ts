/**
 * A gateway serving a real upstream without PUBLIC_BASE_URL tells integrators, in its OpenAPI
 * document, to use its listen address (127.0.0.1 for a wildcard host), and its problem types name a
 * base nobody serves. Nothing said so: the start now warns, naming the setting. The sandbox (no
 * upstream configured) does not: its loopback address is the right one there.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { BACKENDS } from '../../mappings/index.js';
import { resolveStart } from '../../src/server.js';
import { TEST_PEPPER, TEST_WEBHOOK_KEY } from '../helpers/gateway.js';

async function startWarnings(t: Test, env: Record<string, string>): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'rg-base-url-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'gateway.json'), '{}');
  const saved = { ...process.env };
  const write = process.stderr.write;
  let stderr = '';
  Object.assign(process.env, { CONFIG_FILE: join(dir, 'gateway.json'), KEY_PEPPER: TEST_PEPPER, WEBHOOK_ENCRYPTION_KEY: TEST_WEBHOOK_KEY, HOST: '0.0.0.0', PORT: '8080' }, env);
  process.stderr.write = ((text: string) => ((stderr += text), true)) as typeof process.stderr.write;
  try {
    await resolveStart(BACKENDS);
  } finally {
    process.stderr.write = write;
    process.env = saved;
  }
  return stderr;
}

const WHMCS = { WHMCS_URL: 'https://billing.example.com', WHMCS_IDENTIFIER: 'id', WHMCS_SECRET: 'secret' };

t.test('a real upstream without PUBLIC_BASE_URL: the start says what integrators are told', async (t) => {
  const stderr = await startWarnings(t, WHMCS);
  assert.match(stderr, /warning: PUBLIC_BASE_URL \(publicBaseUrl\) is not set: the OpenAPI document tells integrators to use http:\/\/127\.0\.0\.1:8080/);
});

t.test('with PUBLIC_BASE_URL set, nothing is said', async (t) => {
  const stderr = await startWarnings(t, { ...WHMCS, PUBLIC_BASE_URL: 'https://api.example.net' });
  assert.doesNotMatch(stderr, /PUBLIC_BASE_URL/);
});
