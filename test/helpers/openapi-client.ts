/**
 * A client built from a served OpenAPI document alone, as a code generator would build it: a strict
 * JSON Schema validator (Ajv, draft 2020-12, formats checked, objects without
 * `additionalProperties` treated as closed) over the document's schemas, and checks of each answer
 * against its operation (status listed, media type, schema, headers, the problem's reason), of the
 * examples and of what generators need. The v1 sweep
 * (test/openapi/integrator-client.test.ts) and the admin API's (test/admin/admin-client.test.ts) use it.
 */
import assert from 'node:assert/strict';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';
import { bearer } from './gateway.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export type Json = Record<string, any>;

/** What a generated client sees of one answer. */
export interface Answer {
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
export class DocumentClient {
  readonly ajv: Ajv2020;
  readonly mismatches: string[] = [];
  private readonly cache = new Map<string, ValidateFunction>();
  /** Every status answered. */
  readonly statuses = new Set<number>();

  /** `problem`: the components schema of the document's problems (`Problem` in v1's, `AdminProblem` in the admin API's). */
  constructor(
    readonly doc: Json,
    private readonly problem = 'Problem',
  ) {
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
      this.checkProblem(where, answer, body, { $ref: `#/components/schemas/${this.problem}` }, undefined);
      return body;
    }
    if (!found) {
      if (answer.status !== 404) this.fail(`${where}: no documented operation, and not 404`);
      else this.checkProblem(where, answer, body, { $ref: `#/components/schemas/${this.problem}` }, undefined);
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
export function examples(doc: Json): Array<{ where: string; schema: Json; value: unknown }> {
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
export function generatorProblems(doc: Json): string[] {
  const problems: string[] = [];
  const ids = new Map<string, string>();
  const operations = [
    ...Object.entries(doc.paths as Json).flatMap(([path, item]) => Object.entries(item as Json).map(([method, op]) => [`${method} ${path}`, op] as const)),
    ...Object.entries((doc.webhooks ?? {}) as Json).flatMap(([name, item]) => Object.entries(item as Json).map(([method, op]) => [`webhook ${method} ${name}`, op] as const)),
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

export type Send = (method: string, url: string, options?: { key?: string | undefined; body?: unknown; raw?: string; contentType?: string; headers?: Record<string, string> }) => Promise<Answer>;

export function sender(app: FastifyInstance): Send {
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
/** A verdict mismatch: the document takes a body the server refuses as malformed (400), or the other way round. */
export function verdict(client: DocumentClient, label: string, schema: Json, body: unknown, answer: Answer): void {
  const valid = client.errors(schema, body) === undefined;
  const refusedAsMalformed = answer.status === 400;
  if (valid && refusedAsMalformed) client.fail(`request ${label}: the document takes ${JSON.stringify(body).slice(0, 120)}, the server answers 400: ${answer.body.slice(0, 200)}`);
  if (!valid && answer.status < 400) client.fail(`request ${label}: the document refuses ${JSON.stringify(body).slice(0, 120)}, the server answers ${answer.status}`);
  if (!valid && !refusedAsMalformed && answer.status !== 422) client.fail(`request ${label}: the document refuses ${JSON.stringify(body).slice(0, 120)}, the server answers ${answer.status}, not 400/422`);
}

export function requestSchema(doc: Json, path: string, method: string): Json {
  return doc.paths[path][method].requestBody.content['application/json'].schema as Json;
}

export function parameterSchema(doc: Json, path: string, method: string, name: string): Json {
  return (doc.paths[path][method].parameters as Json[]).find((p) => p.name === name)?.schema as Json;
}

