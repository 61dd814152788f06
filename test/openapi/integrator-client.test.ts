/**
 * An integrator's sweep: a client built from the served OpenAPI document alone. For each sandbox
 * backend (WHMCS profile A, FOSSBilling profile A, WHMCS profile B) it reads GET /v1/openapi.json,
 * compiles every schema the document gives with a strict JSON Schema validator (Ajv, draft
 * 2020-12, formats checked, objects without `additionalProperties` treated as closed), then provokes
 * every operation's success and every error status it can (400 401 403 404 405 409 410 413 415 422
 * 429 503) and checks each answer against the document: the status is listed for the operation,
 * the media type is the listed one, the body is the listed schema, every header the document marks
 * required is there, every documented header that is there has the documented type and format, and
 * the problem's reason is one the listed status names. It also checks that every example in the
 * document is valid against its own schema, that the request schemas take what the server takes
 * and refuse what it refuses, and that the document is usable by code generators (unique
 * operationIds, every $ref resolves, no untyped schema, no ambiguous union of objects).
 *
 * test/openapi/document.test.ts checks the document's own shape (profiles, scopes, examples
 * exist); test/helpers/contract-client.ts checks answers against the zod schemas. This file checks
 * answers against the served JSON document, as a generated client would.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { KeyService } from '../../src/keys/key-service.js';
import { PROFILE_ACTIONS } from '../../src/v1/schemas.js';
import { createMemoryStores } from '../../src/stores/memory/index.js';
import { buildBackendGateway, type BackendGateway } from '../helpers/backend-gateway.js';
import { bearer, buildTestGateway, TEST_PEPPER } from '../helpers/gateway.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

type Json = Record<string, any>;

/** What a generated client sees of one answer. */
interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The headers of HTTP itself, which no operation documents. */
const TRANSPORT_HEADERS = new Set(['connection', 'content-length', 'content-type', 'date', 'keep-alive', 'transfer-encoding']);

const escapePointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** Objects that list properties and say nothing of others are closed here: an undocumented field is a mismatch. */
function closeObjects(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(closeObjects);
  if (node === null || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node as Json)) {
    // `properties` and `$defs` map names to schemas: their keys are not keywords.
    if (key === 'properties' || key === '$defs') out[key] = Object.fromEntries(Object.entries(value as Json).map(([name, schema]) => [name, closeObjects(schema)]));
    else out[key] = closeObjects(value);
  }
  if (out.properties && out.type === 'object' && out.additionalProperties === undefined && out.unevaluatedProperties === undefined) out.additionalProperties = false;
  return out;
}

/** The served document as a generated client uses it: validators per schema, per operation and status. */
class DocumentClient {
  readonly ajv: Ajv2020;
  readonly mismatches: string[] = [];
  private readonly cache = new Map<string, ValidateFunction>();
  /** Every status answered. */
  readonly statuses = new Set<number>();

  constructor(readonly doc: Json) {
    // Strict: an unknown keyword, an ambiguous type or a format Ajv does not know is an error, not a pass.
    this.ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true, strictRequired: false });
    addFormats(this.ajv);
    this.ajv.addKeyword({ keyword: 'example' });
    // Every `#/components/schemas/X` of the document resolves against this one resource.
    this.ajv.addSchema(closeObjects(this.rewrite({ $id: 'doc:components', $defs: doc.components.schemas })) as Json);
  }

  /** `#/components/schemas/X` → the components resource. */
  rewrite(schema: unknown): Json {
    return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"doc:components#/$defs/')) as Json;
  }

  validator(schema: Json): ValidateFunction {
    const key = JSON.stringify(schema);
    let validate = this.cache.get(key);
    if (!validate) {
      validate = this.ajv.compile(closeObjects(this.rewrite(schema)) as Json);
      this.cache.set(key, validate);
    }
    return validate;
  }

  errors(schema: Json, value: unknown): string | undefined {
    const validate = this.validator(schema);
    return validate(value) ? undefined : this.ajv.errorsText(validate.errors, { separator: '; ' });
  }

  fail(message: string): void {
    this.mismatches.push(message);
  }

  /** The operation a request goes to, from the document's path templates. */
  operation(method: string, url: string): { path: string; op: Json } | undefined {
    const pathname = url.split('?')[0] as string;
    for (const [path, item] of Object.entries(this.doc.paths as Json)) {
      const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      if (pattern.test(pathname) && (item as Json)[method.toLowerCase()]) return { path, op: (item as Json)[method.toLowerCase()] };
    }
    return undefined;
  }

  /** Checks one answer against the document; returns its parsed JSON body (or undefined). */
  check(method: string, url: string, answer: Answer, label = `${method} ${url}`): any {
    this.statuses.add(answer.status);
    const where = `${label} → ${answer.status}`;
    const mediaType = (answer.headers['content-type'] ?? '').split(';')[0]?.trim() ?? '';
    const body = mediaType.endsWith('json') && answer.body !== '' ? JSON.parse(answer.body) : undefined;
    const found = this.operation(method, url);
    if (answer.status === 405) {
      // Not an operation's answer: the info text promises a Problem with Allow for it.
      if (!answer.headers.allow) this.fail(`${where}: 405 without Allow`);
      this.checkProblem(where, answer, body, { $ref: '#/components/schemas/Problem' }, undefined);
      return body;
    }
    if (!found) {
      if (answer.status !== 404) this.fail(`${where}: no documented operation, and not 404`);
      else this.checkProblem(where, answer, body, { $ref: '#/components/schemas/Problem' }, undefined);
      return body;
    }
    const response = found.op.responses[String(answer.status)] as Json | undefined;
    if (!response) {
      this.fail(`${where}: status not documented (${Object.keys(found.op.responses).join(', ')}): ${answer.body.slice(0, 200)}`);
      return body;
    }
    this.checkHeaders(where, answer, response.headers ?? {});
    const media = response.content?.[mediaType] as Json | undefined;
    if (!media) {
      this.fail(`${where}: content type "${mediaType}" not documented (${Object.keys(response.content ?? {}).join(', ')})`);
      return body;
    }
    if (mediaType === 'application/problem+json') {
      this.checkProblem(where, answer, body, media.schema, String(response.description));
      return body;
    }
    if (mediaType === 'application/pdf') {
      if (!answer.body.startsWith('%PDF-')) this.fail(`${where}: not a PDF`);
      return undefined;
    }
    const errors = this.errors(media.schema, body);
    if (errors) this.fail(`${where}: body does not match its schema: ${errors}`);
    if (body && typeof body === 'object' && 'links' in body && 'meta' in body) this.checkPage(where, url, answer, body);
    return body;
  }

  private checkHeaders(where: string, answer: Answer, documented: Json): void {
    const byName = new Map(Object.entries(documented).map(([name, header]) => [name.toLowerCase(), header as Json]));
    for (const [name, header] of byName) {
      const value = answer.headers[name];
      if (value === undefined) {
        if (header.required) this.fail(`${where}: required header ${name} is missing`);
        continue;
      }
      const schema = header.schema as Json;
      const typed = schema.type === 'integer' || schema.type === 'number' ? (/^-?\d+$/.test(value) ? Number(value) : value) : value;
      const errors = this.errors(schema, typed);
      if (errors) this.fail(`${where}: header ${name}: ${JSON.stringify(value)} ${errors}`);
    }
    for (const name of Object.keys(answer.headers)) {
      if (!TRANSPORT_HEADERS.has(name) && !byName.has(name)) this.fail(`${where}: header ${name} is not documented`);
    }
  }

  private checkProblem(where: string, answer: Answer, body: any, schema: Json, description: string | undefined): void {
    if (!(answer.headers['content-type'] ?? '').startsWith('application/problem+json')) {
      this.fail(`${where}: not application/problem+json`);
      return;
    }
    const errors = this.errors(schema, body);
    if (errors) this.fail(`${where}: problem does not match its schema: ${errors}`);
    if (body.status !== answer.status) this.fail(`${where}: problem status ${body.status}`);
    if (!String(body.type).endsWith(`/${body.reason}`)) this.fail(`${where}: type ${body.type} does not end in its reason`);
    // A replay is the stored answer (contract §5): its problem names the request that made it.
    if (body.request_id !== answer.headers['x-request-id'] && answer.headers['idempotent-replayed'] !== 'true') this.fail(`${where}: request_id is not X-Request-Id`);
    if (body.instance !== `urn:uuid:${body.request_id}`) this.fail(`${where}: instance ${body.instance}`);
    // The response's description names the reasons of its status: what a client switches on.
    if (description !== undefined && !description.includes(`\`${body.reason}\``)) this.fail(`${where}: reason ${body.reason} is not one the document lists for ${answer.status} (${description})`);
  }

  /** `links` and the Link header agree with `meta` and with each other. */
  private checkPage(where: string, url: string, answer: Answer, body: any): void {
    const { page, per_page: perPage, last_page: lastPage } = body.meta;
    const pathname = url.split('?')[0];
    const at = (n: number) => `${pathname}?page=${n}&per_page=${perPage}`;
    const expected = { first: at(1), prev: page > 1 ? at(Math.min(page - 1, lastPage)) : null, next: page < lastPage ? at(page + 1) : null, last: at(lastPage) };
    try {
      assert.deepEqual(body.links, expected);
    } catch {
      this.fail(`${where}: links ${JSON.stringify(body.links)} do not follow meta ${JSON.stringify(body.meta)}`);
    }
    const header = answer.headers.link ?? '';
    for (const [rel, target] of Object.entries(body.links as Record<string, string | null>)) {
      const inHeader = header.includes(`<${target}>; rel="${rel}"`);
      if ((target === null) === header.includes(`rel="${rel}"`) || (target !== null && !inHeader)) this.fail(`${where}: Link header and links.${rel} differ: ${header}`);
    }
  }
}

/** Every `example` in the document, with the schema it illustrates. */
function examples(doc: Json): Array<{ where: string; schema: Json; value: unknown }> {
  const found: Array<{ where: string; schema: Json; value: unknown }> = [];
  const walkSchema = (schema: unknown, where: string) => {
    if (schema === null || typeof schema !== 'object') return;
    if (Array.isArray(schema)) return schema.forEach((item, index) => walkSchema(item, `${where}/${index}`));
    const node = schema as Json;
    if ('example' in node) {
      const { example, ...rest } = node;
      found.push({ where: `${where}/example`, schema: rest, value: example });
    }
    for (const [key, value] of Object.entries(node)) if (key !== 'example') walkSchema(value, `${where}/${escapePointer(key)}`);
  };
  for (const [name, schema] of Object.entries(doc.components.schemas as Json)) walkSchema(schema, `#/components/schemas/${name}`);
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      const base = `#/paths/${escapePointer(path)}/${method}`;
      for (const [index, parameter] of (op.parameters as Json[]).entries()) {
        walkSchema(parameter.schema, `${base}/parameters/${index}/schema`);
        if ('example' in parameter) found.push({ where: `${base}/parameters/${index}/example`, schema: parameter.schema, value: parameter.example });
      }
      for (const [type, media] of Object.entries((op.requestBody?.content ?? {}) as Json)) {
        walkSchema(media.schema, `${base}/requestBody/${type}`);
        if ('example' in media) found.push({ where: `${base}/requestBody/${type}/example`, schema: media.schema, value: media.example });
      }
      for (const [status, response] of Object.entries(op.responses as Json)) {
        for (const [type, media] of Object.entries((response.content ?? {}) as Json)) {
          walkSchema(media.schema, `${base}/responses/${status}/${type}`);
          if ('example' in media) found.push({ where: `${base}/responses/${status}/${type}/example`, schema: media.schema, value: media.example });
        }
      }
    }
  }
  return found;
}

/** A code generator's view: what it cannot type or name. */
function generatorProblems(doc: Json): string[] {
  const problems: string[] = [];
  const ids = new Map<string, string>();
  const operations = [
    ...Object.entries(doc.paths as Json).flatMap(([path, item]) => Object.entries(item as Json).map(([method, op]) => [`${method} ${path}`, op] as const)),
    ...Object.entries(doc.webhooks as Json).flatMap(([name, item]) => Object.entries(item as Json).map(([method, op]) => [`webhook ${method} ${name}`, op] as const)),
  ];
  const tags = new Set((doc.tags as Json[]).map((tag) => tag.name));
  const schemes = new Set(Object.keys(doc.components.securitySchemes));
  for (const [where, op] of operations) {
    const id = op.operationId;
    if (typeof id !== 'string' || !/^[A-Za-z][A-Za-z0-9_]*$/.test(id)) problems.push(`${where}: operationId ${id} is not an identifier`);
    else if (ids.has(id)) problems.push(`${where}: operationId ${id} also names ${ids.get(id)}`);
    else ids.set(id, where);
    for (const tag of op.tags ?? []) if (!tags.has(tag)) problems.push(`${where}: tag ${tag} is not declared`);
    for (const requirement of op.security ?? []) for (const scheme of Object.keys(requirement)) if (!schemes.has(scheme)) problems.push(`${where}: security scheme ${scheme} is not declared`);
    const template = where.split(' ').pop() ?? '';
    for (const [, name] of template.matchAll(/\{([^}]+)\}/g)) {
      if (!(op.parameters as Json[]).some((p) => p.in === 'path' && p.name === name && p.required === true)) problems.push(`${where}: path parameter ${name} is not declared as required`);
    }
  }
  const resolve = (ref: string) => ref.slice(2).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')).reduce<unknown>((node, key) => (node as Json | undefined)?.[key], doc);
  const walk = (node: unknown, where: string, inSchema: boolean) => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) return node.forEach((item, index) => walk(item, `${where}/${index}`, inSchema));
    const value = node as Json;
    if (typeof value.$ref === 'string' && resolve(value.$ref) === undefined) problems.push(`${where}: $ref ${value.$ref} does not resolve`);
    if (inSchema) {
      const union = (value.oneOf ?? value.anyOf) as Json[] | undefined;
      if (union) {
        const objects = union.filter((branch) => branch.$ref || branch.type === 'object');
        if (objects.length > 1 && !value.discriminator) problems.push(`${where}: a union of ${objects.length} object schemas without a discriminator`);
      }
    }
    for (const [key, child] of Object.entries(value)) {
      const childIsSchema = key === 'schema' || (inSchema && !['example', 'enum', 'const', 'required', 'examples', 'default'].includes(key));
      if (childIsSchema && !['properties', '$defs', 'patternProperties'].includes(key) && child !== null && typeof child === 'object' && !Array.isArray(child) && Object.keys(child).length === 0 && key !== 'additionalProperties') {
        problems.push(`${where}/${key}: an empty schema (untyped)`);
      }
      if (!['example', 'examples', 'enum', 'const', 'default'].includes(key)) walk(child, `${where}/${escapePointer(key)}`, childIsSchema || key === 'properties' || key === '$defs' || (inSchema && ['items', 'anyOf', 'oneOf', 'allOf'].includes(key)));
    }
  };
  walk(doc.paths, '#/paths', false);
  walk(doc.webhooks, '#/webhooks', false);
  walk(doc.components.schemas, '#/components/schemas', true);
  return problems;
}

/**
 * The headers the contract promises on an answer must be marked required, or a generated client
 * types them optional: X-Request-Id on every answer (spec §1), Retry-After on 429 (spec §7),
 * WWW-Authenticate on 401 and 403, Location on 201 (contract §6), Content-Disposition on the PDF,
 * Link on a page.
 */
function unmarkedPromises(doc: Json): string[] {
  const problems: string[] = [];
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      for (const [status, response] of Object.entries(op.responses as Json)) {
        const promised = ['X-Request-Id'];
        if (status === '429') promised.push('Retry-After');
        if (status === '401' || status === '403') promised.push('WWW-Authenticate');
        if (status === '201') promised.push('Location');
        if (response.content?.['application/pdf']) promised.push('Content-Disposition');
        if (response.content?.['application/json']?.schema?.$ref?.endsWith('Page')) promised.push('Link');
        for (const name of promised) if (response.headers?.[name]?.required !== true) problems.push(`${method} ${path} ${status}: header ${name} is not marked required`);
      }
    }
  }
  return problems;
}

// ---- the sweep --------------------------------------------------------------------------------

type Send = (method: string, url: string, options?: { key?: string | undefined; body?: unknown; raw?: string; contentType?: string; headers?: Record<string, string> }) => Promise<Answer>;

function sender(app: FastifyInstance): Send {
  return async (method, url, options = {}) => {
    const headers: Record<string, string> = { ...(options.key ? bearer(options.key) : {}), ...options.headers };
    let payload: string | undefined;
    if (options.raw !== undefined || options.body !== undefined) {
      payload = options.raw ?? JSON.stringify(options.body);
      headers['content-type'] = options.contentType ?? 'application/json';
    }
    const response = await app.inject({ method: method as 'GET', url, headers, ...(payload === undefined ? {} : { payload }) });
    const flat: Record<string, string> = {};
    for (const [name, value] of Object.entries(response.headers)) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    return { status: response.statusCode, headers: flat, body: response.rawPayload.toString('latin1') };
  };
}

let counter = 0;
const fresh = (label: string) => `review-${label}-${process.pid}-${++counter}`;

/** The request bodies whose verdicts the document and the server must share: [body, the document's verdict]. */
const ORDER_BODIES = (productId: string, cycle: string): Array<[string, unknown]> => [
  ['minimal', { product_id: productId, billing_cycle: cycle }],
  ['hostname', { product_id: productId, billing_cycle: cycle, hostname: 'srv1.example.com' }],
  ['config_options empty', { product_id: productId, billing_cycle: cycle, config_options: {} }],
  ['extra field', { product_id: productId, billing_cycle: cycle, coupon: 'x' }],
  ['numeric product_id', { product_id: Number(productId), billing_cycle: cycle }],
  ['product_id 0', { product_id: '0', billing_cycle: cycle }],
  ['unknown cycle', { product_id: productId, billing_cycle: 'weekly' }],
  ['no cycle', { product_id: productId }],
  ['option key not digits', { product_id: productId, billing_cycle: cycle, config_options: { os: '1' } }],
  ['option value negative', { product_id: productId, billing_cycle: cycle, config_options: { 1: -1 } }],
  ['option value fraction', { product_id: productId, billing_cycle: cycle, config_options: { 1: 1.5 } }],
  ['option value 65 chars', { product_id: productId, billing_cycle: cycle, config_options: { 1: 'x'.repeat(65) } }],
  ['option value null', { product_id: productId, billing_cycle: cycle, config_options: { 1: null } }],
  ['config_options null', { product_id: productId, billing_cycle: cycle, config_options: null }],
  ['hostname empty', { product_id: productId, billing_cycle: cycle, hostname: '' }],
  ['hostname with underscore', { product_id: productId, billing_cycle: cycle, hostname: 'a_b.example.com' }],
  ['hostname null', { product_id: productId, billing_cycle: cycle, hostname: null }],
  ['array', [{ product_id: productId, billing_cycle: cycle }]],
  ['empty object', {}],
];

const ACTION_BODIES: Array<[string, unknown]> = [
  ['extra field', { action: 'reboot', force: true }],
  ['numeric action', { action: 5 }],
  ['no action', {}],
  ['null action', { action: null }],
  ['unknown action', { action: 'fly' }],
];

const WEBHOOK_BODIES: Array<[string, unknown]> = [
  ['https url', { url: 'https://hooks.example.com/reseller' }],
  ['rotate', { url: 'https://hooks.example.com/reseller', rotate_secret: true }],
  ['http url', { url: 'http://hooks.example.com/reseller' }],
  ['not a url', { url: 'not a url' }],
  ['private address', { url: 'https://hooks.internal-example.com/x' }],
  ['url too long', { url: `https://hooks.example.com/${'x'.repeat(2048)}` }],
  ['no url', {}],
  ['rotate string', { url: 'https://hooks.example.com/reseller', rotate_secret: 'yes' }],
  ['extra field', { url: 'https://hooks.example.com/reseller', events: ['order.created'] }],
  ['unset', { url: null }],
  ['unset and rotate', { url: null, rotate_secret: true }],
];

/** A verdict mismatch: the document takes a body the server refuses as malformed (400), or the other way round. */
function verdict(client: DocumentClient, label: string, schema: Json, body: unknown, answer: Answer): void {
  const valid = client.errors(schema, body) === undefined;
  const refusedAsMalformed = answer.status === 400;
  if (valid && refusedAsMalformed) client.fail(`request ${label}: the document takes ${JSON.stringify(body).slice(0, 120)}, the server answers 400: ${answer.body.slice(0, 200)}`);
  if (!valid && answer.status < 400) client.fail(`request ${label}: the document refuses ${JSON.stringify(body).slice(0, 120)}, the server answers ${answer.status}`);
  if (!valid && !refusedAsMalformed && answer.status !== 422) client.fail(`request ${label}: the document refuses ${JSON.stringify(body).slice(0, 120)}, the server answers ${answer.status}, not 400/422`);
}

function requestSchema(doc: Json, path: string, method: string): Json {
  return doc.paths[path][method].requestBody.content['application/json'].schema as Json;
}

function parameterSchema(doc: Json, path: string, method: string, name: string): Json {
  return (doc.paths[path][method].parameters as Json[]).find((p) => p.name === name)?.schema as Json;
}

interface SweepTarget {
  label: string;
  app: FastifyInstance;
  keys: Record<string, string>;
  profile: 'A' | 'B';
  /** Issues a key with its own limits (for 429). */
  issueKey(scopes: string[], rateLimits: { perMinute: number; burst: number; perDay: number }): Promise<string>;
  stopUpstream(): Promise<void>;
}

async function sweep(target: SweepTarget): Promise<DocumentClient> {
  const send = sender(target.app);
  const docAnswer = await send('GET', '/v1/openapi.json');
  assert.equal(docAnswer.status, 200);
  const doc = JSON.parse(docAnswer.body) as Json;
  const client = new DocumentClient(doc);
  const all = target.keys['acme:all'];
  const none = target.keys['acme:none'];
  const go = async (method: string, url: string, options: Parameters<Send>[2] = {}, label?: string) => {
    const answer = await send(method, url, options);
    return { answer, body: client.check(method, url, answer, label) };
  };

  // Examples and generator usability come from the document alone.
  for (const { where, schema, value } of examples(doc)) {
    const errors = client.errors(schema, value);
    if (errors) client.fail(`example ${where}: ${errors}`);
  }
  for (const problem of generatorProblems(doc)) client.fail(`generator: ${problem}`);
  for (const problem of unmarkedPromises(doc)) client.fail(`headers: ${problem}`);
  // A replayed problem is the stored one (contract §5): its request_id is the first request's, not X-Request-Id.
  if (!/Idempotent-Replayed/.test(String(doc.components.schemas.Problem.properties.request_id.description))) client.fail('Problem.request_id does not say what it is on a replay');
  // The body example of PUT /v1/webhooks is a URL the server can take (https).
  if (!/^https:\/\//.test(String(doc.paths['/v1/webhooks'].put.requestBody.content['application/json'].example.url))) client.fail('PUT /v1/webhooks: its example URL is not https: the server refuses it (422)');

  // Successes, and the ids the rest needs.
  await go('GET', '/v1/health');
  await go('GET', '/v1/openapi.json');
  await go('GET', '/v1/me', { key: all });
  const products = (await go('GET', '/v1/products', { key: all })).body.data as Json[];
  const product = products.find((p) => (p.prices as Json[]).length > 0) ?? products[0];
  assert.ok(product, 'a product');
  for (const p of products) await go('GET', `/v1/products/${p.id}`, { key: all });
  const services = (await go('GET', '/v1/services?per_page=100', { key: all })).body.data as Json[];
  const service = services.find((s) => s.status === 'active') ?? services[0];
  assert.ok(service, 'a service');
  for (const page of [1, 2, 3, 1000]) await go('GET', `/v1/services?page=${page}&per_page=2`, { key: all });
  for (const s of services) {
    await go('GET', `/v1/services/${s.id}`, { key: all });
    await go('GET', `/v1/services/${s.id}/credentials`, { key: all });
  }
  await go('GET', '/v1/billing/balance', { key: all });
  const invoices = (await go('GET', '/v1/billing/invoices?per_page=100', { key: all })).body.data as Json[];
  for (const page of [1, 2, 50]) await go('GET', `/v1/billing/invoices?page=${page}&per_page=3`, { key: all });
  if (invoices[0]) await go('GET', `/v1/billing/invoices/${invoices[0].id}/pdf`, { key: all });
  await go('GET', '/v1/webhooks', { key: all });
  await go('PUT', '/v1/webhooks', { key: all, body: { url: 'https://hooks.example.com/reseller' } });
  await go('GET', '/v1/webhooks', { key: all });
  await go('PUT', '/v1/webhooks', { key: all, body: { url: 'https://hooks.example.com/reseller' } });
  await go('PUT', '/v1/webhooks', { key: all, body: { url: null } });

  // An order, read back, replayed; then the same key with another body (409) and on another endpoint.
  const cycle = ((product.prices as Json[])[0]?.billing_cycle as string | undefined) ?? 'monthly';
  const orderKey = fresh('order');
  const orderBody = { product_id: product.id, billing_cycle: cycle, hostname: 'shop.example.com' };
  const placed = await go('POST', '/v1/orders', { key: all, body: orderBody, headers: { 'idempotency-key': orderKey } });
  if (placed.answer.status === 201) {
    await go('GET', `/v1/orders/${placed.body.id}`, { key: all });
    await go('POST', '/v1/orders', { key: all, body: orderBody, headers: { 'idempotency-key': orderKey } }, 'order replay');
    await go('POST', '/v1/orders', { key: all, body: { ...orderBody, hostname: 'other.example.com' }, headers: { 'idempotency-key': orderKey } }, 'order conflict');
    await go('POST', `/v1/services/${service.id}/actions`, { key: all, body: { action: 'reboot' }, headers: { 'idempotency-key': orderKey } }, 'key on another endpoint');
  } else client.fail(`POST /v1/orders: no order placed (${placed.answer.status} ${placed.answer.body.slice(0, 200)})`);

  // Every action the document offers, on every service (success, 202, 409 action_not_allowed, 422 by the backend).
  const actions = (doc.components.schemas.ActionInput as Json).properties.action.enum as string[];
  for (const s of services.slice(0, 4)) {
    for (const action of actions) {
      const key = fresh('action');
      const body = { action };
      const first = await go('POST', `/v1/services/${s.id}/actions`, { key: all, body, headers: { 'idempotency-key': key } }, `action ${action} on ${s.status}`);
      if ([200, 202, 409, 422].includes(first.answer.status)) await go('POST', `/v1/services/${s.id}/actions`, { key: all, body, headers: { 'idempotency-key': key } }, `action ${action} replayed`);
    }
  }

  // 401: no key, a malformed key, a revoked and an expired key, on every authenticated operation.
  const operations = Object.entries(doc.paths as Json).flatMap(([path, item]) => Object.entries(item as Json).map(([method, op]) => ({ method: method.toUpperCase(), path, op: op as Json })));
  const concrete = (path: string) => path.replace('{id}', path.includes('invoices') ? String(invoices[0]?.id ?? '1') : String(service.id));
  const bodyFor = (path: string) => (path === '/v1/orders' ? orderBody : path.endsWith('/actions') ? { action: actions[0] } : path === '/v1/webhooks' ? { url: null } : undefined);
  for (const { method, path, op } of operations) {
    const url = concrete(path.replace('/v1/orders/{id}', `/v1/orders/${placed.body?.id ?? '1'}`));
    const body = bodyFor(path);
    const idem: Record<string, string> = op.parameters.some((p: Json) => p.name === 'Idempotency-Key') ? { 'idempotency-key': fresh('auth') } : {};
    // 400: a key in the query string, everywhere.
    await go(method, `${url}${url.includes('?') ? '&' : '?'}api_key=rk_x`, { body, headers: idem }, `${method} ${path} key in query`);
    if (op['x-required-scope'] === 'public') continue;
    await go(method, url, { body, headers: idem }, `${method} ${path} no key`);
    await go(method, url, { body, headers: { ...idem, authorization: 'Bearer nonsense' } }, `${method} ${path} malformed key`);
    await go(method, url, { key: target.keys['acme:revoked'], body, headers: idem }, `${method} ${path} revoked key`);
    await go(method, url, { key: target.keys['acme:expired'], body, headers: idem }, `${method} ${path} expired key`);
    if (op['x-required-scope'] !== 'any') await go(method, url, { key: none, body, headers: idem }, `${method} ${path} no scope`);
    // HEAD of a GET: the same status and headers, no body.
    if (method === 'GET') {
      const head = await send('HEAD', url, { key: all });
      const get = await send('GET', url, { key: all });
      if (head.status !== get.status || head.body !== '') client.fail(`HEAD ${path}: ${head.status} with ${head.body.length} bytes, GET ${get.status}`);
    }
  }

  // 404: unknown records and another account's.
  const beta = target.keys['beta:all'];
  for (const url of ['/v1/products/999999', '/v1/orders/999999', '/v1/services/999999', '/v1/services/999999/credentials', '/v1/billing/invoices/999999/pdf', '/v1/nothing-here']) {
    await go('GET', url, { key: all });
  }
  await go('GET', `/v1/services/${service.id}`, { key: beta }, 'another account\'s service');
  await go('POST', '/v1/services/999999/actions', { key: all, body: { action: actions[0] }, headers: { 'idempotency-key': fresh('404') } });
  // 405.
  await go('DELETE', '/v1/orders', { key: all });
  await go('POST', '/v1/me', { key: all });
  await go('PATCH', '/v1/webhooks', { key: all });

  // 400 on input, and the document's verdicts against the server's.
  for (const [label, url] of [
    ['page 0', '/v1/services?page=0'], ['per_page 101', '/v1/services?per_page=101'], ['page abc', '/v1/billing/invoices?page=abc'],
    ['page 1.5', '/v1/billing/invoices?page=1.5'], ['id abc', '/v1/orders/abc'], ['id 0', '/v1/services/0'], ['id leading zero', '/v1/services/01'],
    ['id 19 digits', '/v1/products/1234567890123456789'], ['unknown query', '/v1/services?sort=id'],
  ] as const) {
    const { answer } = await go('GET', url, { key: all }, `GET ${label}`);
    const path = client.operation('GET', url)?.path as string;
    const query = new URLSearchParams(url.split('?')[1] ?? '');
    let valid = true;
    for (const [name, value] of query) {
      const schema = parameterSchema(doc, path, 'get', name);
      if (!schema) continue; // an undocumented parameter: a client would not send it
      valid &&= client.errors(schema, /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value) === undefined;
    }
    const id = url.split('?')[0]?.split('/')[3];
    if (path.includes('{id}') && id) valid &&= client.errors(parameterSchema(doc, path, 'get', 'id'), id) === undefined;
    if (valid && answer.status === 400) client.fail(`request GET ${label}: the document takes it, the server answers 400`);
    if (!valid && answer.status !== 400) client.fail(`request GET ${label}: the document refuses it, the server answers ${answer.status}`);
  }
  for (const [label, key] of [['80 chars', 'k'.repeat(80)], ['81 chars', 'k'.repeat(81)], ['quoted', `"quoted-${++counter}"`], ['space', 'a b'], ['colon', 'a:b'], ['empty', '']] as const) {
    // An action no profile has: refused (422) once the key is read, so the key is never stored.
    const { answer } = await go('POST', `/v1/services/${service.id}/actions`, { key: all, body: { action: 'no-such-action' }, headers: { 'idempotency-key': key } }, `Idempotency-Key ${label}`);
    const valid = client.errors(parameterSchema(doc, '/v1/services/{id}/actions', 'post', 'Idempotency-Key'), key) === undefined;
    const keyRefused = answer.status === 400 && /idempotency_key/.test(answer.body);
    if (valid === keyRefused) client.fail(`request Idempotency-Key ${label}: the document ${valid ? 'takes' : 'refuses'} it, the server answers ${answer.status} ${answer.body.slice(0, 160)}`);
  }
  await go('POST', '/v1/orders', { key: all, body: orderBody }, 'no Idempotency-Key');
  await go('POST', '/v1/orders', { key: all, raw: '{"product_id":', headers: { 'idempotency-key': fresh('bad-json') } }, 'malformed JSON');

  for (const [label, body] of ORDER_BODIES(product.id as string, cycle)) {
    const { answer } = await go('POST', '/v1/orders', { key: all, body, headers: { 'idempotency-key': fresh('body') } }, `order body ${label}`);
    verdict(client, `POST /v1/orders ${label}`, requestSchema(doc, '/v1/orders', 'post'), body, answer);
  }
  // Every action of either profile: those the document does not offer must be refused (422 invalid_action).
  const anyAction = [...new Set([...PROFILE_ACTIONS.A, ...PROFILE_ACTIONS.B])];
  for (const [label, body] of [...ACTION_BODIES, ...anyAction.map((action): [string, unknown] => [action, { action }])]) {
    const { answer } = await go('POST', `/v1/services/${service.id}/actions`, { key: all, body, headers: { 'idempotency-key': fresh('body') } }, `action body ${label}`);
    verdict(client, `POST actions ${label}`, requestSchema(doc, '/v1/services/{id}/actions', 'post'), body, answer);
  }
  for (const [label, body] of WEBHOOK_BODIES) {
    const { answer } = await go('PUT', '/v1/webhooks', { key: all, body }, `webhook body ${label}`);
    verdict(client, `PUT /v1/webhooks ${label}`, requestSchema(doc, '/v1/webhooks', 'put'), body, answer);
  }
  // Every request-body example as a client would send it.
  for (const { method, path, op } of operations) {
    const media = op.requestBody?.content?.['application/json'] as Json | undefined;
    if (!media) continue;
    const headers: Record<string, string> = op.parameters.some((p: Json) => p.name === 'Idempotency-Key') ? { 'idempotency-key': fresh('example') } : {};
    const { answer } = await go(method, concrete(path), { key: all, body: media.example, headers }, `${method} ${path} with its example body`);
    if (answer.status === 400) client.fail(`${method} ${path}: its own request example is refused with 400: ${answer.body.slice(0, 200)}`);
  }

  // 413, 415.
  await go('POST', '/v1/orders', { key: all, raw: JSON.stringify({ product_id: '1', billing_cycle: 'monthly', hostname: 'x'.repeat(70_000) }), headers: { 'idempotency-key': fresh('big') } }, 'body too large');
  await go('PUT', '/v1/webhooks', { key: all, raw: 'url=https://x', contentType: 'application/x-www-form-urlencoded' }, 'form body');
  await go('POST', '/v1/orders', { key: all, raw: 'x', contentType: 'text/plain', headers: { 'idempotency-key': fresh('text') } }, 'text body');

  // 429: a key with one request a minute; then the same limit behind every operation.
  const slow = await target.issueKey(['read:products', 'read:services'], { perMinute: 1, burst: 0, perDay: 1000 });
  await go('GET', '/v1/products', { key: slow }, 'first within the limit');
  await go('GET', '/v1/products', { key: slow }, 'rate limited');
  await go('GET', '/v1/me', { key: slow }, 'rate limited, any scope');
  await go('GET', '/v1/services', { key: slow }, 'rate limited, list');
  const daily = await target.issueKey(['read:billing'], { perMinute: 60, burst: 20, perDay: 1 });
  await go('GET', '/v1/billing/balance', { key: daily }, 'daily quota');
  await go('GET', '/v1/billing/balance', { key: daily }, 'daily quota spent');

  // 503: the upstream down (health and the operations that reach it).
  await target.stopUpstream();
  // Health keeps a check's result for one second.
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  if ((await go('GET', '/v1/health', {}, 'upstream down')).answer.status !== 503) client.fail('GET /v1/health: not 503 with the upstream down');
  await go('GET', '/v1/products', { key: all }, 'upstream down');
  await go('GET', `/v1/services/${service.id}`, { key: all }, 'upstream down');
  await go('POST', '/v1/orders', { key: all, body: orderBody, headers: { 'idempotency-key': fresh('down') } }, 'upstream down');
  await go('POST', `/v1/services/${service.id}/actions`, { key: all, body: { action: actions[0] }, headers: { 'idempotency-key': fresh('down') } }, 'upstream down');
  return client;
}

function backendTarget(gw: BackendGateway, profile: 'A' | 'B'): SweepTarget {
  const keys = new KeyService(gw.stores.keys, TEST_PEPPER);
  return {
    label: `${gw.backend} ${profile}`,
    app: gw.app,
    keys: gw.keys,
    profile,
    async issueKey(scopes, rateLimits) {
      return (await keys.issue({ accountId: 'acme', name: fresh('limited'), scopes: scopes as never, rateLimits })).key;
    },
    stopUpstream: () => gw.stopUpstream(),
  };
}

for (const [backend, profile] of [['whmcs', 'A'], ['fossbilling', 'A'], ['whmcs', 'B']] as const) {
  t.test(`a client from the served document: ${backend}, profile ${profile}`, async (t) => {
    const gw = await buildBackendGateway(backend, { profile });
    t.teardown(() => gw.close());
    const client = await sweep(backendTarget(gw, profile));
    const expected = [200, 201, ...(backend === 'whmcs' && profile === 'A' ? [202] : []), 400, 401, 403, 404, 405, 409, 413, 415, 422, 429, 503];
    assert.deepEqual(expected.filter((status) => !client.statuses.has(status)), [], 'every status was provoked');
    assert.deepEqual(client.mismatches, [], `${client.mismatches.length} mismatches:\n${client.mismatches.join('\n')}`);
  });
}

t.test('a client from the served document: 410 replay_stale (profile A)', async (t) => {
  let now = Date.UTC(2026, 10, 22, 9, 0, 0);
  const stores = createMemoryStores({ now: () => now });
  const gw = await buildTestGateway({ stores });
  t.teardown(() => gw.close());
  const send = sender(gw.app);
  const client = new DocumentClient(JSON.parse((await send('GET', '/v1/openapi.json')).body) as Json);
  const key = gw.keys['acme:all'];
  const order = { product_id: '1', billing_cycle: 'monthly', hostname: 'shop.example.com' };
  const first = await send('POST', '/v1/orders', { key, body: order, headers: { 'idempotency-key': 'stale-1' } });
  client.check('POST', '/v1/orders', first);
  now += 2 * 3_600_000;
  const stale = await send('POST', '/v1/orders', { key, body: order, headers: { 'idempotency-key': 'stale-1' } });
  assert.equal(stale.status, 410, stale.body);
  client.check('POST', '/v1/orders', stale, 'replay after two hours');
  assert.deepEqual(client.mismatches, [], client.mismatches.join('\n'));
});
