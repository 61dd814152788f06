/**
 * The backends this gateway can serve. Adding one: its mapping under mappings/<name>/, its simulator
 * under simulators/<name>/, and one line here. Simulators load only when a sandbox starts.
 */
import type { BackendRegistry } from '../src/backend/registry.js';
import { fossbillingPlugin } from './fossbilling/plugin.js';
import { v1Plugin } from './v1/plugin.js';
import { whmcsPlugin } from './whmcs/plugin.js';

export const BACKENDS: BackendRegistry = [
  { ...whmcsPlugin, sandbox: async (options) => (await import('../simulators/whmcs/sandbox.js')).startWhmcsSandbox(options) },
  { ...fossbillingPlugin, sandbox: async (options) => (await import('../simulators/fossbilling/sandbox.js')).startFossbillingSandbox(options) },
  { ...v1Plugin, sandbox: async (options) => (await import('../simulators/v1/sandbox.js')).startV1Sandbox(options) },
];
