/**
 * ModuleCustom, ModuleSuspend, ModuleUnsuspend, ModuleTerminate, and the module "create" that
 * AcceptOrder runs with autosetup. The module's answers depend on the service's state, the way a
 * real panel refuses to reboot a VPS it has already destroyed.
 */
import type { ModuleEffect, Product, Service, SimulatorState } from '../model.js';
import { phpInt, scalarParam, type FormArray } from '../protocol.js';
import { failure, findProduct, type ActionHandler } from './shared.js';

/** Texts the simulated panels return; WHMCS passes module text through as `message`. */
const MODULE_ERRORS = {
  notFound: 'Account not found on the server',
  suspended: 'Account is suspended',
  alreadySuspended: 'Account is already suspended',
  notSuspended: 'Account is not suspended',
} as const;

const FUNCTION_NOT_FOUND = '!Function not found in module!';

type ModuleTarget = { service: Service; product: Product } | { error: string };

function findModuleTarget(state: SimulatorState, params: FormArray): ModuleTarget {
  // `accountid` is the pre-7.7 name of `serviceid`.
  const serviceId = phpInt(params.serviceid ?? params.accountid);
  if (!serviceId) return { error: 'Service ID is required' };
  const service = state.services.find((row) => row.id === serviceId);
  if (!service) return { error: 'Service ID not found' };
  const product = findProduct(state, service.pid);
  if (!product?.module) return { error: 'Service not assigned to a module' };
  return { service, product };
}

/** Only live accounts exist on the panel; pending, terminated, cancelled and fraud ones do not. */
function existsOnPanel(service: Service): boolean {
  return service.status === 'Active' || service.status === 'Suspended';
}

function applyEffect(service: Service, effect: ModuleEffect): void {
  service.power = effect === 'power_off' ? 'off' : 'on';
}

/** A deterministic address from the documentation-free benchmarking range, unique per service. */
function provisionedIp(serviceId: number): string {
  return `198.18.${Math.floor(serviceId / 256) % 256}.${serviceId % 256}`;
}

/** What a module's CreateAccount leaves behind: an address, a username, a running VPS. */
export function provisionService(state: SimulatorState, service: Service, params: FormArray): void {
  const product = findProduct(state, service.pid);
  const serverId = phpInt(params.serverid);
  if (serverId && state.servers.some((server) => server.id === serverId)) service.serverId = serverId;
  service.username = scalarParam(params, 'serviceusername') || service.username;
  service.password = scalarParam(params, 'servicepassword') || service.password;
  if (product?.type === 'server' && !service.dedicatedip) service.dedicatedip = provisionedIp(service.id);
  service.power = 'on';
}

export const moduleCustom: ActionHandler = ({ params, state }) => {
  const target = findModuleTarget(state, params);
  if ('error' in target) return failure(target.error);
  // PHP function names are case-insensitive, so the lookup is too.
  const functionName = (scalarParam(params, 'func_name') ?? '').toLowerCase();
  const effect = state.moduleFunctions[target.product.module]?.[functionName];
  if (!effect) return failure(FUNCTION_NOT_FOUND);
  if (!existsOnPanel(target.service)) return failure(MODULE_ERRORS.notFound);
  if (target.service.status === 'Suspended') return failure(MODULE_ERRORS.suspended);
  applyEffect(target.service, effect);
  return { result: 'success' };
};

export const moduleSuspend: ActionHandler = ({ params, state }) => {
  const target = findModuleTarget(state, params);
  if ('error' in target) return failure(target.error);
  const { service } = target;
  if (!existsOnPanel(service)) return failure(MODULE_ERRORS.notFound);
  if (service.status === 'Suspended') return failure(MODULE_ERRORS.alreadySuspended);
  service.status = 'Suspended';
  service.suspensionreason = scalarParam(params, 'suspendreason') ?? '';
  service.power = 'off';
  return { result: 'success' };
};

export const moduleUnsuspend: ActionHandler = ({ params, state }) => {
  const target = findModuleTarget(state, params);
  if ('error' in target) return failure(target.error);
  const { service } = target;
  if (!existsOnPanel(service)) return failure(MODULE_ERRORS.notFound);
  if (service.status !== 'Suspended') return failure(MODULE_ERRORS.notSuspended);
  service.status = 'Active';
  service.suspensionreason = '';
  service.power = 'on';
  return { result: 'success' };
};

export const moduleTerminate: ActionHandler = ({ params, state }) => {
  const target = findModuleTarget(state, params);
  if ('error' in target) return failure(target.error);
  const { service } = target;
  if (!existsOnPanel(service)) return failure(MODULE_ERRORS.notFound);
  service.status = 'Terminated';
  service.suspensionreason = '';
  service.power = 'off';
  return { result: 'success' };
};
