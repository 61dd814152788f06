import type { TraceContext } from '../../../ops/trace.js';
import { z } from 'zod';
import { BackendError, type CallContext, type Customer } from '../../../backend/backend.js';
import type { Profile } from '../../../config.js';
import { ApiError } from '../../../errors.js';
import { fromBackend } from '../../../http/problems.js';
import { defineEndpoint, type DocumentedOffer, type DocumentedOverrides, type EndpointDeps } from '../../../http/endpoint.js';
import { type IdempotentAttempt, requireAttempt } from '../../../http/idempotency.js';
import { ActionResultSchema, ALL_ACTIONS, PROFILE_ACTIONS, type ActionResult, type Service, type ServiceAction } from '../../../v1/schemas.js';
import { IdParamsSchema } from '../params.js';

// Any string: a name outside the offered set, empty or long included, is 422 `invalid_action` with
// `allowed_actions` (contract), not a bare validation error; the body limit bounds its length.
const DESCRIPTION =
  'Requires `Idempotency-Key`. The action set follows the deployment\'s profile, narrowed to the actions its billing backend supports; an action outside it is 422 `invalid_action` with `allowed_actions`. ' +
  'A valid action that the service\'s current state forbids is 409 `action_not_allowed`.';

const ActionInputSchema = z
  .strictObject({
    action: z.string().meta({
      description:
        'Profile A: start, stop, reboot, cancel, cancel_revoke. Profile B: start, stop, reboot, reinstall, suspend, unsuspend, terminate. ' +
        'Only those the billing backend supports are offered; `allowed_actions` of a 422 lists them.',
      examples: [...ALL_ACTIONS],
    }),
  })
  .meta({ id: 'ActionInput' });

const CANCEL_TAKES_EFFECT: Record<DocumentedOffer['cancel'], string> = {
  scheduled: '`cancel` is accepted for the end of the billing period: 202 with `effective_on`.',
  completed: '`cancel` ends the service at once: 200.',
  either: '`cancel` is accepted for the end of the billing period (202 with `effective_on`) or ends the service at once (200), as the billing backend does it.',
};

/**
 * What the document shows: the closed set this deployment offers, and `cancel`'s answer (202 only
 * where the backend schedules it, which never happens without `cancel` in the set, as in profile B).
 */
function documented(offer: DocumentedOffer): DocumentedOverrides {
  const cancels = offer.actions.includes('cancel');
  return {
    body: z
      .strictObject({
        action:
          offer.actions.length > 0
            ? z.enum(offer.actions as [ServiceAction, ...ServiceAction[]]).meta({ description: `The actions this deployment offers (profile ${offer.profile}).` })
            : z.string().meta({ description: 'This deployment offers no service action: any name answers 422 `invalid_action`.' }),
      })
      .meta({ id: 'ActionInput' }),
    description: `${DESCRIPTION} ${cancels ? CANCEL_TAKES_EFFECT[offer.cancel] : ''}`.trim(),
    omitResponses: cancels && offer.cancel !== 'completed' ? [] : [202],
  };
}

function resultStatus(result: ActionResult): number {
  return result.outcome === 'scheduled' ? 202 : 200;
}

/** Whether a fresh read of the service shows the action's effect; null when its state cannot tell. */
function actionVisible(action: ServiceAction, service: Service): boolean | null {
  switch (action) {
    case 'suspend':
      return service.status === 'suspended';
    case 'unsuspend':
      return service.status === 'active';
    case 'terminate':
      return service.status === 'terminated';
    // A cancelled service is the effect (a backend that cancels at once: FOSSBilling). Anything
    // else proves nothing: a pending cancellation comes from a cached list (or none at all when the
    // backend does not track them), and a scheduled one leaves the status as it was.
    case 'cancel':
      return service.status === 'cancelled' ? true : null;
    // Pending cancellations: as above, not proof either way.
    default:
      return null;
  }
}

/**
 * An earlier attempt with this key sent the action and its outcome is unknown. Where a fresh read
 * of the service's state shows the effect, answer as if it succeeded; where it shows it did not
 * happen, run it; where the state cannot tell (power actions), refuse rather than run it twice.
 */
async function reconcile(deps: EndpointDeps, customer: Customer, id: string, action: ServiceAction, call: CallContext, attempt: IdempotentAttempt) {
  let service: Service;
  try {
    service = await deps.backend.getService(customer, id, call);
  } catch (error) {
    if (!(error instanceof BackendError)) throw error;
    throw attempt.outcomeUnknown(`service ${id}: reading its state failed: ${error.operatorMessage ?? error.detail}`);
  }
  const visible = actionVisible(action, service);
  if (visible === true) {
    return { action, outcome: 'completed', effective_on: null, service } as ActionResult;
  }
  if (visible === null) throw attempt.outcomeUnknown(`service ${id}: the effect of "${action}" is not visible in the service's state`);
  return null;
}

/**
 * The action, when this deployment offers it: in the profile's set and supported by the backend.
 * Otherwise 422 naming what is offered; thrown before anything is sent, so the idempotency claim
 * is released, not stored, and the client may retry the key with a valid action (contract §5).
 */
function offeredAction(action: string, deps: EndpointDeps): ServiceAction {
  return offeredAmong(action, deps.config.profile, deps.backend.capabilities.serviceActions);
}

function offeredAmong(action: string, profile: Profile, supported: readonly ServiceAction[]): ServiceAction {
  const allowed = PROFILE_ACTIONS[profile].filter((candidate) => supported.includes(candidate));
  if (!(allowed as readonly string[]).includes(action)) {
    throw new ApiError('invalid_action', `"${action.slice(0, 64)}" is not an action this API offers; allowed: ${allowed.join(', ') || 'none'}.`, {
      extensions: { allowed_actions: allowed },
    });
  }
  return action as ServiceAction;
}

/** An upstream's 422 `invalid_action`, its `allowed_actions` kept to those of `profile`. */
function narrowedRefusal(error: unknown, profile: Profile): unknown {
  if (!(error instanceof ApiError) || error.reason !== 'invalid_action' || !Array.isArray(error.extensions.allowed_actions)) return error;
  const offered: readonly unknown[] = PROFILE_ACTIONS[profile];
  const allowed = error.extensions.allowed_actions.filter((action) => offered.includes(action));
  return new ApiError('invalid_action', error.detail, { extensions: { ...error.extensions, allowed_actions: allowed }, headers: error.headers, ...(error.errors ? { errors: error.errors } : {}) });
}

/**
 * service.action.succeeded, and service.status_changed when the action changed the status. Its
 * order's status can follow (on FOSSBilling the order is the service) and the detector reads only
 * open orders: an order it watches is read again then, for its order.status_changed. `readAt`:
 * before the backend was called (it reads the service back then), so that a later state the
 * detector recorded meanwhile is not taken back by this older read.
 */
async function announceSuccess(deps: EndpointDeps, customer: Customer, action: ServiceAction, result: ActionResult, call: CallContext, readAt: number): Promise<void> {
  const { events } = deps.webhooks;
  const { accountId } = customer;
  const { trace } = call;
  const orderId = result.service.order_id;
  await events.emitForWrite(accountId, 'service.action.succeeded', result, trace);
  // An action whose effect the status cannot show (a reboot, a scheduled cancel): a status with
  // nothing recorded before it is no change of the action's.
  const knownOnly = actionVisible(action, result.service) === null;
  await events.safely(async () => {
    if (!(await events.observe(accountId, { kind: 'service', resource: result.service }, { trace, readAt, knownOnly })) || orderId === null) return;
    await events.observeKnownOrder(accountId, orderId, () => deps.backend.getOrder(customer, orderId, call), trace);
  }, accountId);
}

/** service.action.failed when the backend refused the action; not when its outcome is unknown. */
async function announceFailure(deps: EndpointDeps, accountId: string, serviceId: string, action: string, error: unknown, trace: TraceContext | undefined): Promise<void> {
  if (!(error instanceof BackendError) || error.outcomeUnknown || error.kind === 'not_found' || error.kind === 'timeout') return;
  const problem = fromBackend(error);
  const data = { service_id: serviceId, action, status: problem.status, reason: problem.reason, detail: problem.detail };
  const { events } = deps.webhooks;
  await events.emitForWrite(accountId, 'service.action.failed', data, trace);
}

export default defineEndpoint({
  method: 'POST',
  url: '/v1/services/:id/actions',
  operationId: 'runServiceAction',
  summary: 'Run a service action',
  tag: 'Services',
  scope: 'write:services',
  idempotent: true,
  params: IdParamsSchema,
  body: ActionInputSchema,
  // The description too: it depends on what the deployment offers (see documented).
  documented,
  // A v1 upstream decides what it supports, but never runs an action outside this gateway's profile.
  passthrough: {
    refuse: ({ body, deps }) => void offeredAmong(body.action, deps.config.profile, ALL_ACTIONS),
    // The upstream's `allowed_actions`, narrowed to this gateway's profile: what it offers.
    failure: (error, { deps }) => narrowedRefusal(error, deps.config.profile),
  },
  responses: {
    200: { description: 'The action ran; the service as it now stands.', schema: ActionResultSchema, example: { action: 'reboot', outcome: 'completed', effective_on: null } },
    202: {
      description: 'The action was accepted and takes effect later (cancel).',
      schema: ActionResultSchema,
      example: { action: 'cancel', outcome: 'scheduled', effective_on: '2026-01-31' },
    },
  },
  errors: ['not_found', 'invalid_action', 'action_not_allowed', 'validation_failed', 'idempotency_conflict', 'idempotency_in_progress', 'replay_stale', 'outcome_unknown'],
  async handler({ params, body, caller, deps, call, attempt: maybeAttempt }) {
    const attempt = requireAttempt(maybeAttempt);
    const serviceAction = offeredAction(body.action, deps);
    const readAt = Date.now();
    if (attempt.reconcile) {
      const earlier = await reconcile(deps, caller.customer, params.id, serviceAction, call, attempt);
      if (earlier) {
        // The earlier attempt, whose outcome was unknown, announced nothing: it succeeded through the gateway.
        await announceSuccess(deps, caller.customer, serviceAction, earlier, call, readAt);
        return { status: resultStatus(earlier), body: earlier };
      }
    }
    let result: ActionResult;
    try {
      result = await deps.backend.runServiceAction(caller.customer, params.id, serviceAction, { ...call, beforeWrite: attempt.beforeWrite });
    } catch (error) {
      await announceFailure(deps, caller.account.id, params.id, serviceAction, error, call.trace);
      throw error;
    }
    await announceSuccess(deps, caller.customer, serviceAction, result, call, readAt);
    return { status: resultStatus(result), body: result };
  },
});
