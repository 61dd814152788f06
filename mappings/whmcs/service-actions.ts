/**
 * Which WHMCS call carries out a v1 service action, and whether the service's state allows it.
 * Decided before anything is sent: WHMCS itself would run most of these in any state.
 */
import { BackendError } from '../../src/backend/backend.js';
import type { ServiceAction, ServiceBillingCycle, ServiceStatus } from '../../src/v1/schemas.js';
import type { ActionId } from './actions.js';
import type { FormParams } from './client.js';
import type { WhmcsConfig } from './config.js';

export interface ServiceState {
  id: string;
  status: ServiceStatus;
  cancellationPending: boolean;
  /** The server module of the service's product; "" when it has none. */
  module: string;
  billingCycle: ServiceBillingCycle;
  /** null for WHMCS's "0000-00-00". */
  nextDueOn: string | null;
}

export interface ActionPlan {
  action: ActionId;
  params: FormParams;
  outcome: 'completed' | 'scheduled';
}

const POWER_ACTIONS = ['start', 'stop', 'reboot', 'reinstall'] as const;
type PowerAction = (typeof POWER_ACTIONS)[number];

/** Module commands and the states they apply to. */
const MODULE_COMMANDS = {
  suspend: { action: 'ModuleSuspend', needs: ['active'] },
  unsuspend: { action: 'ModuleUnsuspend', needs: ['suspended'] },
  terminate: { action: 'ModuleTerminate', needs: ['active', 'suspended'] },
} as const satisfies Record<string, { action: ActionId; needs: readonly ServiceStatus[] }>;

const isPowerAction = (action: ServiceAction): action is PowerAction => (POWER_ACTIONS as readonly string[]).includes(action);

/**
 * Not supported for this service (no module, or no allowed function): a `validation` error, since
 * the request is well-formed and no change of state would make it possible.
 */
export function unsupported(action: ServiceAction): BackendError {
  return new BackendError('validation', `The action "${action}" is not supported for this service.`);
}

/** Refusals of cancel and cancel_revoke: the same answer whether the state read first or WHMCS itself refuses. */
export function cancellationPending(): BackendError {
  return new BackendError('conflict', 'A cancellation is already pending for this service.');
}

export function noCancellationPending(): BackendError {
  return new BackendError('conflict', 'No cancellation is pending for this service.');
}

function requireState(action: ServiceAction, service: ServiceState, allowed: readonly ServiceStatus[]): void {
  if (!allowed.includes(service.status)) {
    throw new BackendError('conflict', `The action "${action}" needs the service to be ${allowed.join(' or ')}; it is ${service.status}.`);
  }
}

export function planServiceAction(action: ServiceAction, service: ServiceState, config: WhmcsConfig): ActionPlan {
  const serviceid = service.id;
  if (isPowerAction(action)) {
    // ModuleCustom calls any `<module>_<func>`: only allow-listed names are ever sent.
    const funcName = config.moduleFunctions[service.module]?.[action];
    if (!funcName) throw unsupported(action);
    requireState(action, service, ['active']);
    return { action: 'ModuleCustom', params: { serviceid, func_name: funcName }, outcome: 'completed' };
  }
  switch (action) {
    case 'suspend':
    case 'unsuspend':
    case 'terminate': {
      if (service.module === '') throw unsupported(action);
      const command = MODULE_COMMANDS[action];
      requireState(action, service, command.needs);
      return { action: command.action, params: { serviceid }, outcome: 'completed' };
    }
    case 'cancel':
      requireState(action, service, ['active', 'suspended']);
      if (service.cancellationPending) throw cancellationPending();
      // WHMCS's daily task (Cron/Task/CancellationRequests.php) skips the request of a service
      // without a next due date unless it is free: a paid one-time service would never end.
      if (service.nextDueOn === null && service.billingCycle !== 'free') {
        throw new BackendError('validation', 'The action "cancel" is not supported for this service: it has no billing period to end.');
      }
      return {
        action: 'AddCancelRequest',
        params: { serviceid, type: 'End of Billing Period', reason: config.cancelReason },
        outcome: 'scheduled',
      };
    case 'cancel_revoke':
      if (!service.cancellationPending) throw noCancellationPending();
      return { action: 'CancelRevoke', params: { serviceid }, outcome: 'completed' };
  }
}

/**
 * A custom action WHMCS cannot run: "Invalid API Action" when it is not in its API catalog, "Command
 * Not Found" (HTTP 200, HandleProcessor::getApiFilePath) when it is but its file is missing.
 */
export const UNUSABLE_ACTION = /invalid api action|^command not found/i;
