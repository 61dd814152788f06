/**
 * AddCancelRequest, GetCancelledPackages, and GatewayDeleteCancelRequest: the custom API action an
 * operator installs for cancel_revoke, since stock WHMCS has no way to delete a request.
 */
import { nextId, sqlDateTime, type CancelRequest } from '../model.js';
import { phpInt, scalarParam } from '../protocol.js';
import { failure, pageParams, paginate, type ActionHandler } from './shared.js';

const DEFAULT_REASON = 'None Specified (API Submission)';

export const addCancelRequest: ActionHandler = ({ params, state, now }) => {
  const service = state.services.find((row) => row.id === phpInt(params.serviceid));
  if (!service) return failure('Service ID Not Found');
  const ids = { serviceid: String(service.id), userid: String(service.clientId) };
  if (state.cancelRequests.some((request) => request.relid === service.id)) {
    return failure('Existing Cancellation Request Exists', ids);
  }
  const timestamp = sqlDateTime(now);
  state.cancelRequests.push({
    id: nextId(state.cancelRequests),
    date: timestamp,
    relid: service.id,
    reason: scalarParam(params, 'reason') || DEFAULT_REASON,
    // Any other value becomes End of Billing Period.
    type: scalarParam(params, 'type') === 'Immediate' ? 'Immediate' : 'End of Billing Period',
    createdAt: timestamp,
    updatedAt: timestamp,
  });
  return { result: 'success', ...ids };
};

function renderRequest(request: CancelRequest): Record<string, string> {
  return {
    id: String(request.id),
    date: request.date,
    relid: String(request.relid),
    reason: request.reason,
    type: request.type,
    created_at: request.createdAt,
    updated_at: request.updatedAt,
  };
}

/** Every request of every client, processed ones included (the cron never deletes them). */
export const getCancelledPackages: ActionHandler = ({ params, state }) => {
  const all = [...state.cancelRequests].sort((a, b) => a.id - b.id);
  const page = pageParams(params, 25);
  const rows = paginate(all, page);
  return {
    result: 'success',
    totalresults: String(all.length),
    startnumber: page.start,
    numreturned: rows.length,
    packages: rows.length === 0 ? [] : { package: rows.map(renderRequest) },
  };
};

/** Deletes a request that is still pending, i.e. its service has not been cancelled or terminated yet. */
export const gatewayDeleteCancelRequest: ActionHandler = ({ params, state }) => {
  const service = state.services.find((row) => row.id === phpInt(params.serviceid));
  const index = state.cancelRequests.findIndex((request) => request.relid === service?.id);
  const processed = service?.status === 'Cancelled' || service?.status === 'Terminated';
  if (!service || index < 0 || processed) return failure('No Cancellation Request Found');
  state.cancelRequests.splice(index, 1);
  return { result: 'success', serviceid: String(service.id) };
};
