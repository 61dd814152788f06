/** The sandbox's start-up banner: where it serves, and its demo keys (printed, never logged). */
import type { ResolvedConfig } from '../config.js';
import { KeyService } from '../keys/key-service.js';
import { resolvePepper } from '../keys/pepper.js';
import { issueDemoKeys, type DemoKey, type Sandbox } from '../sandbox.js';
import type { Stores } from '../stores/types.js';
import { mayPrintDemoKeys } from './mode.js';

/** The sandbox's demo keys, for the start-up banner. */
export async function demoKeys(stores: Stores, config: ResolvedConfig, sandbox: Sandbox): Promise<DemoKey[]> {
  return issueDemoKeys(stores.keys, new KeyService(stores.keys, resolvePepper(config), { previousPeppers: config.keys.previousPeppers, issueChecksums: config.keys.issueChecksums }), sandbox);
}

/** Printed to the terminal on purpose (sandbox keys on simulator data), never to the log. */
export function printBanner(options: { config: ResolvedConfig; sandbox: Sandbox; store: string; address: string; opsAddress: string; demo: DemoKey[]; workers: number }): void {
  const { config, address, demo } = options;
  // Only where no one else can reach the listener unless asked.
  const printKeys = mayPrintDemoKeys(config.host, process.env);
  const lines = [
    '',
    `reseller-gateway sandbox (profile ${config.profile}, ${options.store} store${options.workers > 1 ? `, ${options.workers} workers` : ''}) on ${address}`,
    `upstream: ${options.sandbox.upstream} (local sandbox upstream)`,
    `ops (metrics, probes): ${options.opsAddress}`,
    ...(printKeys
      ? [
          'demo keys (new at every start; the previous ones are revoked):',
          ...demo.map((d) => `  ${d.account.padEnd(5)} ${d.name.padEnd(18)} ${d.key}`),
          '',
          `try: curl -s -H "Authorization: Bearer ${demo[0]?.key}" ${address}/v1/me`,
        ]
      : [
          `demo keys issued but not printed: ${config.host} is not a loopback address.`,
          'Set SANDBOX_PRINT_KEYS=1 to print them, or issue one with the key CLI (reseller-keys issue).',
        ]),
    '',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
