/**
 * `tsx simulators/whmcs/main.ts`: one simulator on PORT (default 8089) for manual play.
 * HOST, WHMCS_SIMULATOR_LATENCY_MS, WHMCS_SIMULATOR_IDENTIFIER, WHMCS_SIMULATOR_SECRET and
 * WHMCS_SIMULATOR_HIDE_CUSTOM_FIELDS=1 (service answers without custom fields) are honoured.
 * The secret is printed on purpose: it guards nothing but seed data.
 */
import { closeOnSignal, numberFromEnv } from '../shared/cli.js';
import { startWhmcsSimulator } from './server.js';

const simulator = await startWhmcsSimulator({
  host: process.env.HOST || '127.0.0.1',
  port: numberFromEnv('whmcs-simulator', 'PORT', 8089),
  latencyMs: numberFromEnv('whmcs-simulator', 'WHMCS_SIMULATOR_LATENCY_MS', 0),
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

closeOnSignal(simulator);
