/**
 * `doctor` with a wrong WHMCS secret: each run is one failed login (and only one), and WHMCS bans
 * the gateway's address after three. The operator is told so, and how to lift the ban, before
 * re-running it makes things worse.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import type { DoctorCheck } from '../../../src/backend/backend.js';
import { PROFILE_ACTIONS } from '../../../src/v1/schemas.js';
import { createWhmcsBackend } from '../../../mappings/whmcs/backend.js';
import { WhmcsConfigSchema } from '../../../mappings/whmcs/config.js';
import { whmcsSimulatorConfig } from '../../../simulators/whmcs/sandbox.js';
import { startWhmcsSimulator } from '../../../simulators/whmcs/server.js';

t.test('doctor runs with a wrong secret until WHMCS bans the address', async (t) => {
  const sim = await startWhmcsSimulator({ banAfterFailures: 3 });
  t.teardown(() => sim.close());
  const config = WhmcsConfigSchema.parse({ ...whmcsSimulatorConfig(sim), secret: 'wrong-secret' });

  async function credentialsCheck(): Promise<DoctorCheck> {
    const backend = createWhmcsBackend(config);
    try {
      const checks = (await backend.diagnose?.({ serviceActions: PROFILE_ACTIONS.A })) ?? [];
      assert.ok(checks.filter((check) => check.id !== 'credentials' && check.id !== 'time-zone').every((check) => check.status === 'skip'), 'no other upstream check runs');
      const credentials = checks.find((check) => check.id === 'credentials');
      assert.ok(credentials);
      return credentials;
    } finally {
      await backend.close();
    }
  }

  const first = await credentialsCheck();
  assert.equal(sim.calls.length, 1, 'one login attempt per run');
  assert.equal(first.status, 'fail');
  assert.match(first.detail, /Authentication Failed/);
  // Plain about what this run did and what the next ones will do.
  assert.match(first.fix ?? '', /this run was one failed login/i);
  assert.match(first.fix ?? '', /3 failed logins/);
  assert.match(first.fix ?? '', /Configuration → System Settings → Banned IPs/);

  await credentialsCheck();
  await credentialsCheck();
  assert.equal(sim.calls.length, 3, 'one login attempt per run');

  const banned = await credentialsCheck();
  assert.equal(sim.calls.length, 4);
  assert.match(banned.detail, /IP Banned/);
  // How to lift it: where in WHMCS's admin area, and how to keep it from happening again.
  assert.match(banned.fix ?? '', /Configuration → System Settings → Banned IPs/);
  assert.match(banned.fix ?? '', /Whitelisted IPs/);
  assert.doesNotMatch(JSON.stringify([first, banned]), /wrong-secret/, 'no secret in any result');
});
