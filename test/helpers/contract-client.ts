/**
 * A client for end-to-end suites that checks every answer against the endpoint's own contract: a
 * documented success status with a body that is exactly its response schema (no field more), or
 * a Problem+JSON document. It remembers which endpoints answered with success, so that a suite can
 * prove it reached every one.
 */
import assert from 'node:assert/strict';
import type { Endpoint } from '../../src/http/endpoint.js';
import { call, type HttpResponse } from './http.js';

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

  constructor(
    private readonly base: string,
    endpoints: readonly Endpoint[],
  ) {
    this.routes = endpoints.map(routeOf);
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
