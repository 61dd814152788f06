/**
 * `tsx simulators/fossbilling/main.ts`: one simulator on PORT (default 8090) for manual play.
 * HOST, FOSSBILLING_SIMULATOR_LATENCY_MS and FOSSBILLING_SIMULATOR_TOKEN are honoured. The token is
 * printed on purpose: it guards nothing but seed data.
 */
import { startFossbillingSimulator } from './server.js';

function numberFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    process.stderr.write(`fossbilling-simulator: ${name} must be a non-negative integer, got "${raw}"\n`);
    process.exit(64); // EX_USAGE
  }
  return value;
}

const simulator = await startFossbillingSimulator({
  host: process.env.HOST || '127.0.0.1',
  port: numberFromEnv('PORT', 8090),
  latencyMs: numberFromEnv('FOSSBILLING_SIMULATOR_LATENCY_MS', 0),
  ...(process.env.FOSSBILLING_SIMULATOR_TOKEN ? { apiToken: process.env.FOSSBILLING_SIMULATOR_TOKEN } : {}),
});

process.stdout.write(
  [
    `FOSSBilling simulator listening on ${simulator.url}`,
    `  api token: ${simulator.apiToken}`,
    '',
    `try: curl -s -u admin:${simulator.apiToken} -H 'content-type: application/json' -d '{"id":1}' ${simulator.url}/api/admin/client/get`,
    '',
  ].join('\n'),
);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void simulator.close().then(() => process.exit(0));
  });
}
