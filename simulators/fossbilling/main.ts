/**
 * `tsx simulators/fossbilling/main.ts`: one simulator on PORT (default 8090) for manual play.
 * HOST, FOSSBILLING_SIMULATOR_LATENCY_MS and FOSSBILLING_SIMULATOR_TOKEN are honoured. The token is
 * printed on purpose: it guards nothing but seed data.
 */
import { closeOnSignal, numberFromEnv } from '../shared/cli.js';
import { startFossbillingSimulator } from './server.js';

const simulator = await startFossbillingSimulator({
  host: process.env.HOST || '127.0.0.1',
  port: numberFromEnv('fossbilling-simulator', 'PORT', 8090),
  latencyMs: numberFromEnv('fossbilling-simulator', 'FOSSBILLING_SIMULATOR_LATENCY_MS', 0),
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

closeOnSignal(simulator);
