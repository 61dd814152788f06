/**
 * The v1 service actions FOSSBilling can carry out, per profile, and the states each needs
 * (src/modules/Order/Service.php: suspend needs `active`, unsuspend `suspended`; cancel refuses
 * `canceled`, `pending_setup` and `failed_setup`). FOSSBilling's core has no power commands
 * (start, stop, reboot, reinstall), and its only irreversible removal is `order/delete`, which
 * erases the record: `terminate` is not offered.
 *
 * Nor is `cancel_revoke`: a cancel made here is immediate, so it leaves no pending cancellation to
 * withdraw (one staff scheduled for the period's end, meta `cancel_at_period_end`, is withdrawn in
 * FOSSBilling's admin area), and `order/uncancel` is no undo. It starts a new period from today with no invoice
 * (uncancelFromOrder: `expires_at` = now + one period; the cancel had cleared it) and makes the
 * hosting account again, empty (the cancel removed it). Offered to resellers, cancel then revoke
 * would renew any service, an overdue one included, for free.
 */
import { BackendError } from '../../src/backend/backend.js';
import type { ServiceAction } from '../../src/v1/schemas.js';

export const FOSSBILLING_ACTIONS = {
  A: ['cancel'],
  B: ['suspend', 'unsuspend'],
} as const satisfies Record<'A' | 'B', readonly ServiceAction[]>;

interface Plan {
  method: 'order/suspend' | 'order/unsuspend' | 'order/cancel';
  needs: readonly string[];
  withReason: boolean;
}

const PLANS: Readonly<Partial<Record<ServiceAction, Plan>>> = {
  suspend: { method: 'order/suspend', needs: ['active'], withReason: true },
  unsuspend: { method: 'order/unsuspend', needs: ['suspended'], withReason: false },
  cancel: { method: 'order/cancel', needs: ['active', 'suspended', 'failed_renew'], withReason: true },
};

/** Every action it supports, whatever the profile: the backend's declared capability. */
export const FOSSBILLING_SERVICE_ACTIONS: readonly ServiceAction[] = [...FOSSBILLING_ACTIONS.A, ...FOSSBILLING_ACTIONS.B];

/**
 * `cancellationScheduled`: staff scheduled the order's cancellation for the end of its period (map.ts
 * isCancellationScheduled). v1's cancel asks for just that, so it is refused as on WHMCS, where a
 * second cancel finds the first pending; order/cancel would end the service at once.
 */
export function planServiceAction(action: ServiceAction, orderStatus: string, cancellationScheduled = false): Plan {
  const plan = PLANS[action];
  if (!plan) {
    throw new BackendError('validation', `The action "${action}" is not supported by this billing backend; it supports: ${FOSSBILLING_SERVICE_ACTIONS.join(', ')}.`);
  }
  if (action === 'cancel' && cancellationScheduled) {
    throw new BackendError('conflict', 'A cancellation is already pending for this service.');
  }
  if (!plan.needs.includes(orderStatus)) {
    throw new BackendError('conflict', `The action "${action}" is not possible in the service's current state.`);
  }
  return plan;
}
