/**
 * `tsx simulators/whmcs/main.ts`: one simulator on PORT (default 8089) for manual play.
 * HOST, WHMCS_SIMULATOR_LATENCY_MS, WHMCS_SIMULATOR_IDENTIFIER, WHMCS_SIMULATOR_SECRET and
 * WHMCS_SIMULATOR_HIDE_CUSTOM_FIELDS=1 (service answers without custom fields) are honoured.
 * The secret is printed on purpose: it guards nothing but seed data.
 */
import { startWhmcsSimulator } from './server.js';

function numberFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    process.stderr.write(`whmcs-simulator: ${name} must be a non-negative integer, got "${raw}"\n`);
    process.exit(64); // EX_USAGE
  }
  return value;
}

const simulator = await startWhmcsSimulator({
  host: process.env.HOST || '127.0.0.1',
  port: numberFromEnv('PORT', 8089),
  latencyMs: numberFromEnv('WHMCS_SIMULATOR_LATENCY_MS', 0),
  quirks: { hideServiceCustomFields: process.env.WHMCS_SIMULATOR_HIDE_CUSTOM_FIELDS === '1' },
  ...(process.env.WHMCS_SIMULATOR_IDENTIFIER ? { identifier: process.env.WHMCS_SIMULATOR_IDENTIFIER } : {}),
  ...(process.env.WHMCS_SIMULATOR_SECRET ? { secret: process.env.WHMCS_SIMULATOR_SECRET } : {}),
});

process.stdout.write(
  [
    `WHMCS simulator listening on ${simulator.url}`,
    `  api url:    ${simulator.apiUrl}`,
    `  identifier: ${simulator.identifier}`,
    `  secret:     ${simulator.secret}`,
    '',
    `try: curl -s ${simulator.apiUrl} -d action=GetClientsDetails -d clientid=1 -d responsetype=json \\`,
    `       -d identifier=${simulator.identifier} -d secret=${simulator.secret}`,
    '',
  ].join('\n'),
);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void simulator.close().then(() => process.exit(0));
  });
}
