/**
 * The admin API's own OpenAPI 3.1 document (`GET /admin/v1/openapi.json`), generated from the admin
 * endpoints' zod schemas as v1's is (src/openapi/), and linted with it (scripts/lint-openapi.mjs).
 */
import type { Profile } from '../config.js';
import type { AnyReason } from '../errors.js';
import { openApiPath, parameters, toSchema } from '../openapi/document.js';
import { exampleOf } from '../openapi/examples.js';
import { ACCEPT_ENCODING, errorResponses, inputReasons, problemSchema, type ProblemResponses } from '../openapi/problems.js';
import type { AdminEndpoint } from './endpoint.js';
import { ADMIN_POLICY } from './rate-limit.js';
import { ADMIN_SCOPES } from './tokens.js';

type JsonSchema = Record<string, unknown>;

const SECURITY_SCHEME = 'adminToken';

const TAGS: Record<string, string> = {
  Accounts: 'Reseller accounts: each maps to one customer of the billing backend.',
  Keys: "The v1 API keys of an account: issued, rotated and revoked here; a key's secret is shown once.",
  Webhooks: "An account's webhook endpoint and what became of its recent events.",
  System: 'This document.',
};

// `required`: on every such answer, so a generated client types it as always there.
const REQUEST_ID = { description: 'Generated for every response; the admin audit log names it.', required: true, schema: { type: 'string', format: 'uuid' } };
const RETRY_AFTER = { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } };

// Required where the status has this one reason, which always sends the header (401, 403, 429).
const REASON_HEADERS: Partial<Record<AnyReason, Record<string, object>>> = {
  unauthenticated: { 'WWW-Authenticate': { description: '`Bearer realm="admin"`, with `error="invalid_token"` when a token was sent.', required: true, schema: { type: 'string' } } },
  insufficient_scope: { 'WWW-Authenticate': { description: '`Bearer realm="admin", error="insufficient_scope", scope="…"`.', required: true, schema: { type: 'string' } } },
  method_not_allowed: { Allow: { description: 'The methods the path supports.', schema: { type: 'string' } } },
  unsupported_media_type: { 'Accept-Encoding': ACCEPT_ENCODING },
  rate_limited: { 'Retry-After': { ...RETRY_AFTER, required: true } },
  idempotency_in_progress: { 'Retry-After': RETRY_AFTER },
  store_unavailable: { 'Retry-After': RETRY_AFTER },
};

/** On every admin answer. */
const HEADERS = { 'X-Request-Id': REQUEST_ID, 'Cache-Control': { description: 'Always `no-store`.', required: true, schema: { type: 'string' } } };

const PROBLEMS: ProblemResponses = { schema: 'AdminProblem', headers: HEADERS, reasonHeaders: REASON_HEADERS };

export interface AdminDocumentOptions {
  /** The ops listener's base URL. */
  serverUrl: string;
  /** The deployment's profile: B's idempotency records never go stale (no 410). */
  profile: Profile;
  /** The configured base of problem `type` URIs (config `problemTypeBase`); the default when not given. */
  problemTypeBase?: string | undefined;
}

/** Every reason an admin endpoint can answer with: its own plus those its kind implies. */
function reasonsOf(endpoint: AdminEndpoint, profile: Profile): AnyReason[] {
  const reasons = new Set<AnyReason>(['unauthenticated', 'rate_limited', 'internal_error', 'store_unavailable', ...endpoint.errors]);
  if (endpoint.scope !== 'any') reasons.add('insufficient_scope');
  for (const reason of inputReasons(endpoint)) reasons.add(reason);
  if (profile === 'B') reasons.delete('replay_stale');
  return [...reasons];
}

function operation(endpoint: AdminEndpoint, { profile, problemTypeBase }: AdminDocumentOptions, schemas: Record<string, JsonSchema>): object {
  const responses: Record<string, object> = {};
  for (const [status, spec] of Object.entries(endpoint.responses)) {
    const headers: Record<string, object> = { ...HEADERS };
    // An endpoint's own success headers (Location, Link) are on every such answer, replays included.
    for (const [name, description] of Object.entries(spec.headers ?? {})) headers[name] = { description, required: true, schema: { type: 'string' } };
    if (endpoint.idempotent) headers['Idempotent-Replayed'] = { description: '`true` when this is the stored answer replayed.', schema: { type: 'string' } };
    const schema = toSchema(spec.schema, 'output', { schemas });
    responses[status] = { description: spec.description, headers, content: { 'application/json': { schema, example: exampleOf(schema, schemas) } } };
  }
  const problems = problemTypeBase === undefined ? PROBLEMS : { ...PROBLEMS, typeBase: problemTypeBase };
  Object.assign(responses, errorResponses(reasonsOf(endpoint, profile), problems));
  const scopeNote = endpoint.scope === 'any' ? 'Any admin token.' : `Requires the admin scope \`${endpoint.scope}\`.`;
  const body = endpoint.body ? toSchema(endpoint.body, 'input', { schemas }) : undefined;
  return {
    operationId: endpoint.operationId,
    summary: endpoint.summary,
    description: [scopeNote, endpoint.description].filter(Boolean).join(' '),
    tags: [endpoint.tag],
    'x-required-scope': endpoint.scope,
    security: [{ [SECURITY_SCHEME]: [] }],
    parameters: parameters(
      endpoint,
      { schemas },
      'Unique per intended operation (1 to 80 characters of `A-Z a-z 0-9 _ . -`): a retry with the same key and body answers the first answer again.',
    ),
    ...(body ? { requestBody: { required: true, content: { 'application/json': { schema: body, example: exampleOf(body, schemas) } } } } : {}),
    responses,
  };
}

export function buildAdminOpenApiDocument(endpoints: AdminEndpoint[], options: AdminDocumentOptions): object {
  const { serverUrl, profile } = options;
  const schemas: Record<string, JsonSchema> = {};
  const paths: Record<string, Record<string, object>> = {};
  for (const endpoint of endpoints) {
    const path = openApiPath(endpoint.url);
    paths[path] = { ...paths[path], [endpoint.method.toLowerCase()]: operation(endpoint, options, schemas) };
  }
  // Beside the operations' reasons, those of a call no operation takes (see the info text): its problem is an AdminProblem too.
  const reasons = [...new Set([...endpoints.flatMap((endpoint) => reasonsOf(endpoint, profile)), 'method_not_allowed', 'not_found'])].sort();
  schemas.AdminProblem = problemSchema('RFC 9457 Problem Details, as the v1 API answers them. `type` is an absolute URI ending in `reason`.', reasons, {
    violated_policies: { type: 'array', items: { type: 'string' }, description: `With \`rate_limited\`: \`${ADMIN_POLICY}\` (\`admin.perMinute\` calls per token).` },
    held_by: { type: 'string', description: 'With `upstream_id_taken`: the id of the account mapped to that `upstream_id`.' },
  });
  return {
    openapi: '3.1.0',
    info: {
      title: 'Reseller gateway admin API',
      version: '1.0.0',
      contact: { name: 'The gateway operator' },
      license: { name: "Proprietary: the operator's terms", identifier: 'LicenseRef-Proprietary' },
      description: [
        "The operator's API for its own panel: accounts, their v1 API keys, and their webhook deliveries.",
        'It is served on the ops listener only (never on the public port), and only while admin tokens are configured.',
        'Authentication: `Authorization: Bearer <admin token>`; each operation needs one admin scope (`x-required-scope`); `admin:read` covers every read.',
        'Every call is written to the admin audit log. Calls are rate-limited per admin token.',
        'Errors are `application/problem+json`, as in the v1 API. Every GET operation answers HEAD too: the status and headers GET would have, no body. ' +
          'A path this document lists, called with a method it does not list, answers 405 `method_not_allowed` with `Allow`; any other path under `/admin/v1` 404 `not_found`.',
      ].join('\n\n'),
    },
    servers: [{ url: serverUrl, description: 'The ops listener of this gateway (config `ops.host`, `ops.port`).' }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      schemas,
      securitySchemes: {
        [SECURITY_SCHEME]: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'rgadm_<secret>',
          description: `An admin token (\`reseller-keys admin-token create\`). Scopes: ${ADMIN_SCOPES.map((scope) => `\`${scope}\``).join(', ')}.`,
        },
      },
    },
  };
}
