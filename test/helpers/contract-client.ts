/**
 * A client for end-to-end suites that checks every answer against the endpoint's own contract: a
 * documented success status with a body that is exactly its response schema (no field more), or
 * a Problem+JSON document; and against the OpenAPI document the gateway serves: the status is
 * documented for the operation, and so is every header the answer carries beyond HTTP's own. It
 * remembers which endpoints answered with success, so that a suite can prove it reached every one.
 */
import assert from 'node:assert/strict';
import type { Endpoint } from '../../src/http/endpoint.js';
import { openApiPath } from '../../src/openapi/document.js';
import { call, type HttpResponse } from './http.js';

type Documented = { paths: Record<string, Record<string, { responses: Record<string, { headers?: Record<string, unknown> }> }>> };

/** Headers of HTTP itself (framing, connection, content), which no operation documents. */
const TRANSPORT_HEADERS = new Set(['connection', 'content-length', 'content-type', 'date', 'keep-alive', 'transfer-encoding']);

/** The status is one the served document lists for the operation, and each header the answer carries is listed for that status. */
function checkDocumented(document: Documented, endpoint: Endpoint, response: HttpResponse, label: string): void {
  const operation = document.paths[openApiPath(endpoint.url)]?.[endpoint.method.toLowerCase()];
  assert.ok(operation, `${label}: the served document has no such operation`);
  const documented = operation.responses[String(response.status)];
  assert.ok(documented, `${label}: the served document lists no ${response.status} for it (${Object.keys(operation.responses).join(', ')})`);
  const names = new Set(Object.keys(documented.headers ?? {}).map((name) => name.toLowerCase()));
  for (const name of Object.keys(response.headers)) {
    if (!TRANSPORT_HEADERS.has(name)) assert.ok(names.has(name), `${label}: header ${name} is not documented for ${response.status}`);
  }
}

interface Route {
  endpoint: Endpoint;
  pattern: RegExp;
}

function routeOf(endpoint: Endpoint): Route {
  const pattern = endpoint.url.replace(/:[a-z_]+/gi, '[^/]+');
  return { endpoint, pattern: new RegExp(`^${pattern}$`) };
}

function checkProblem(response: HttpResponse, label: string): void {
  assert.match(response.headers['content-type'] ?? '', /^application\/problem\+json/, label);
  const problem = response.json();
  assert.equal(problem.status, response.status, label);
  assert.equal(typeof problem.reason, 'string', label);
  assert.equal(problem.request_id, response.headers['x-request-id'], label);
}

function checkSuccess(endpoint: Endpoint, response: HttpResponse, label: string): void {
  const spec = endpoint.responses[response.status];
  assert.ok(spec, `${label}: status ${response.status} is not documented: ${response.text.slice(0, 300)}`);
  if (spec.contentType === 'application/pdf') {
    assert.equal(response.headers['content-type'], 'application/pdf', label);
    return;
  }
  assert.match(response.headers['content-type'] ?? '', /^application\/json/, label);
  assert.ok(spec.schema, `${label}: no schema documented`);
  const body = response.json();
  const parsed = spec.schema.safeParse(body);
  assert.ok(parsed.success, `${label}: ${parsed.error?.message}`);
  // The schema strips what it does not know: equal means the body holds nothing undocumented.
  assert.deepEqual(parsed.data, body, `${label}: fields beyond the schema`);
}

export class ContractClient {
  private readonly routes: Route[];
  private readonly succeeded = new Set<string>();
  private document: Promise<Documented> | undefined;

  constructor(
    private readonly base: string,
    endpoints: readonly Endpoint[],
  ) {
    this.routes = endpoints.map(routeOf);
  }

  /** The document this gateway serves (read once). */
  private served(): Promise<Documented> {
    this.document ??= call(this.base, 'GET', '/v1/openapi.json').then((response) => response.json() as Documented);
    return this.document;
  }

  async send(
    method: 'GET' | 'POST' | 'PUT',
    path: string,
    options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<HttpResponse> {
    const route = this.routes.find((r) => r.endpoint.method === method && r.pattern.test(path.split('?')[0] as string));
    assert.ok(route, `no endpoint serves ${method} ${path}`);
    const response = await call(this.base, method, path, options);
    const label = `${method} ${path} → ${response.status}`;
    assert.ok(response.headers['x-request-id'], label);
    checkDocumented(await this.served(), route.endpoint, response, label);
    if (response.status >= 400) checkProblem(response, label);
    else {
      checkSuccess(route.endpoint, response, label);
      this.succeeded.add(route.endpoint.operationId);
    }
    return response;
  }

  /** The endpoints that have not answered with success yet. */
  notReached(): string[] {
    return this.routes.map((r) => r.endpoint.operationId).filter((id) => !this.succeeded.has(id));
  }
}
