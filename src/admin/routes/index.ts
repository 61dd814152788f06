import type { AdminEndpoint } from '../endpoint.js';
import { buildAdminOpenApiDocument, type AdminDocumentOptions } from '../openapi.js';
import createAccount from './accounts-create.js';
import listAccounts from './accounts-list.js';
import getAccount from './accounts-get.js';
import updateAccount from './accounts-update.js';
import deleteAccount from './accounts-delete.js';
import disableAccount from './accounts-disable.js';
import enableAccount from './accounts-enable.js';
import issueKey from './keys-issue.js';
import listKeys from './keys-list.js';
import getKey from './keys-get.js';
import rotateKey from './keys-rotate.js';
import revokeKey from './keys-revoke.js';
import getWebhook from './webhook-get.js';
import enableWebhook from './webhook-enable.js';
import listDeliveries from './deliveries-list.js';
import replayDelivery from './deliveries-replay.js';
import { adminOpenApiEndpoint } from './openapi.js';

const operations = [
  createAccount,
  listAccounts,
  getAccount,
  updateAccount,
  deleteAccount,
  disableAccount,
  enableAccount,
  issueKey,
  listKeys,
  getKey,
  rotateKey,
  revokeKey,
  getWebhook,
  enableWebhook,
  listDeliveries,
  replayDelivery,
] as unknown as AdminEndpoint[];

/** Every admin endpoint, the OpenAPI document's included, for the ops listener at `serverUrl`. */
export function adminEndpoints(options: AdminDocumentOptions): AdminEndpoint[] {
  let document: object | undefined;
  const all = [...operations, adminOpenApiEndpoint(() => document ?? {}) as unknown as AdminEndpoint];
  document = buildAdminOpenApiDocument(all, options);
  return all;
}

/** The document `GET /admin/v1/openapi.json` serves (scripts and tests use it too). */
export function adminOpenApiDocument(options: AdminDocumentOptions): object {
  return buildAdminOpenApiDocument(adminEndpoints(options), options);
}
