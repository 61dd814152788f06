import assert from 'node:assert/strict';
import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import { REASONS } from '../../src/errors.js';
import { openApiDocument } from '../../src/app.js';
import { openApiPath } from '../../src/openapi/document.js';
import { SCOPES } from '../../src/keys/scopes.js';
import { PROFILE_ACTIONS } from '../../src/v1/schemas.js';
import { EVENT_TYPES } from '../../src/webhooks/events.js';
import { buildTestGateway, type TestGateway } from '../helpers/gateway.js';

type Operation = {
  description?: string;
  requestBody?: { content: Record<string, { schema: unknown; example?: unknown }> };
  security: Array<Record<string, string[]>>;
  'x-required-scope': string;
  responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { example?: unknown }> }>;
  parameters: Array<{ name: string; in: string }>;
};
type Document = { openapi: string; servers: Array<{ url: string }>; webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: { $ref?: string } }> } } }>; paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } };

/**
 * The problem type pages are served on the public port but, like the ops listener's probes, are no
 * part of the v1 contract the document describes.
 */
const UNDOCUMENTED = new Set(['GET /problems/', 'GET /problems/{reason}']);

/** The routes Fastify actually serves, as `METHOD /openapi/path`, but the undocumented ones. */
function servedRoutes(gw: TestGateway): Set<string> {
  const served = new Set(gw.app.servedRoutes.map((route) => {
    const [method, url] = route.split(' ');
    return `${method} ${openApiPath(url as string)}`;
  }));
  for (const route of UNDOCUMENTED) assert.ok(served.delete(route), `${route} is served`);
  return served;
}

for (const profile of ['A', 'B'] as const) {
  t.test(`OpenAPI document, profile ${profile}`, async (t) => {
    let gw: TestGateway;
    let doc: Document;
    t.before(async () => {
      gw = await buildTestGateway({ profile });
      const response = await gw.app.inject({ method: 'GET', url: '/v1/openapi.json' });
      assert.equal(response.statusCode, 200);
      doc = response.json() as Document;
    });
    t.teardown(() => gw.close());

    t.test('is a valid OpenAPI 3.1 document', async () => {
      assert.equal(doc.openapi, '3.1.0');
      const result = await new Validator().validate(doc as never);
      assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
    });

    t.test('documents every webhook event type with its payload schema', async () => {
      assert.deepEqual(Object.keys(doc.webhooks).sort(), [...EVENT_TYPES].sort());
      for (const [type, item] of Object.entries(doc.webhooks)) {
        const ref = item.post.requestBody.content['application/json']?.schema.$ref ?? '';
        const schema = doc.components.schemas[ref.replace('#/components/schemas/', '')] as { properties: { type: { const: string } } };
        assert.equal(schema.properties.type.const, type);
      }
    });

    t.test('documents exactly the routes the gateway serves', async () => {
      const documented = new Set<string>();
      for (const [path, operations] of Object.entries(doc.paths)) {
        for (const method of Object.keys(operations)) documented.add(`${method.toUpperCase()} ${path}`);
      }
      assert.deepEqual([...documented].sort(), [...servedRoutes(gw)].sort());
      assert.equal(documented.size, 16, 'fifteen endpoints of the spec plus the OpenAPI document');
    });

    t.test('states the scope, the errors and the headers of every operation', async () => {
      for (const [path, operations] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(operations)) {
          const where = `${method} ${path}`;
          const scope = op['x-required-scope'];
          assert.ok(['public', 'any', ...SCOPES].includes(scope), where);
          if (scope !== 'public') {
            assert.ok(op.responses['401'], `${where} documents 401`);
            assert.ok(op.responses['429'], `${where} documents 429`);
          }
          if (scope !== 'public' && scope !== 'any') {
            assert.deepEqual(op.security, [{ bearerApiKey: [] }], where);
            assert.match(String(op.description), new RegExp(`Requires scope \`${scope}\``), `${where} names its scope`);
            assert.ok(op.responses['403'], `${where} documents 403`);
          }
          for (const [status, response] of Object.entries(op.responses)) {
            assert.ok(response.headers?.['X-Request-Id'], `${where} ${status} documents X-Request-Id`);
            if (Number(status) >= 400) assert.ok(response.content?.['application/problem+json'], `${where} ${status} is a problem`);
          }
        }
      }
      assert.ok(doc.paths['/v1/orders']?.post?.parameters.some((p) => p.name === 'Idempotency-Key' && p.in === 'header'));
      assert.ok(doc.paths['/v1/services/{id}/actions']?.post?.responses['422']);
      assert.ok(doc.paths['/v1/billing/invoices/{id}/pdf']?.get?.responses['200']?.content?.['application/pdf']);
      const problem = doc.components.schemas.Problem as { properties: { reason: { enum: string[] } } };
      assert.deepEqual(problem.properties.reason.enum.sort(), Object.keys(REASONS).sort());
      const stale = doc.paths['/v1/orders']?.post?.responses['410'];
      assert.equal(Boolean(stale), profile === 'A', 'replay_stale exists in Profile A only');
    });

    t.test('documents what any answer can carry: 400 everywhere, the limits and no-store on problems, replays of stored refusals', async () => {
      assert.match(String((doc as { info?: { description?: string } }).info?.description), /405 `method_not_allowed` with `Allow`/);
      for (const [path, operations] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(operations)) {
          const where = `${method} ${path}`;
          // A key in the query string is refused on every route, public ones included.
          assert.ok(op.responses['400'], `${where} documents 400`);
          assert.ok(op.responses['429']?.headers?.RateLimit && op.responses['429'].headers['X-RateLimit-Remaining'], `${where} 429 documents the limits`);
          const idempotent = op.parameters.some((p) => p.name === 'Idempotency-Key');
          for (const [status, response] of Object.entries(op.responses)) {
            if (Number(status) < 400) continue;
            const headers = response.headers ?? {};
            if (op['x-required-scope'] !== 'public') {
              assert.ok(headers['Cache-Control'], `${where} ${status} documents Cache-Control`);
              if (status !== '401' && status !== '403') assert.ok(headers['X-RateLimit-Limit'] && headers.RateLimit, `${where} ${status} documents the limits`);
            }
            assert.equal(Boolean(headers['Idempotent-Replayed']), idempotent && ['400', '404', '409', '422'].includes(status), `${where} ${status}: Idempotent-Replayed`);
          }
        }
      }
    });

    t.test('shows the running profile\'s closed action set, an absolute server URL and an example per operation', async () => {
      const input = doc.components.schemas.ActionInput as { properties: { action: { enum: string[] } } };
      assert.deepEqual(input.properties.action.enum, [...PROFILE_ACTIONS[profile]]);
      assert.match(doc.servers[0]?.url ?? '', /^https?:\/\/[^/]+/);
      for (const [path, operations] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(operations)) {
          const success = Object.entries(op.responses).filter(([status]) => Number(status) < 300);
          const json = success.map(([, response]) => response.content?.['application/json']).filter(Boolean);
          for (const media of json) assert.notEqual(media?.example, undefined, `${method} ${path} has a success example`);
          for (const media of Object.values(op.requestBody?.content ?? {})) assert.notEqual(media.example, undefined, `${method} ${path} has a body example`);
        }
      }
    });
  });
}

t.test('OpenAPI document: the actions offered are the backend\'s within the profile, and cancel\'s answer is its own', async () => {
  type Doc = Document & { info: { description: string } };
  const actions = (document: Doc) => (document.components.schemas.ActionInput as { properties: { action: { enum: string[] } } }).properties.action.enum;
  const operation = (document: Doc) => document.paths['/v1/services/{id}/actions']?.post as Operation;
  // A backend that cancels at once and carries out only some actions (FOSSBilling's capabilities).
  const immediate = openApiDocument({ profile: 'A' }, { serviceActions: ['cancel', 'cancel_revoke', 'suspend', 'unsuspend'], reconcilesOrders: true, cancelOutcome: 'completed' }) as Doc;
  assert.deepEqual(actions(immediate), ['cancel', 'cancel_revoke']);
  assert.match(immediate.info.description, /Service actions: cancel, cancel_revoke\./);
  assert.deepEqual(Object.keys(operation(immediate).responses).filter((status) => Number(status) < 300), ['200']);
  assert.match(String(operation(immediate).description), /`cancel` ends the service at once: 200\./);

  const scheduled = openApiDocument({ profile: 'A' }, { serviceActions: [...PROFILE_ACTIONS.A], reconcilesOrders: true, cancelOutcome: 'scheduled' }) as Doc;
  assert.deepEqual(actions(scheduled), [...PROFILE_ACTIONS.A]);
  const examples = Object.fromEntries(
    Object.entries(operation(scheduled).responses)
      .filter(([status]) => Number(status) < 300)
      .map(([status, response]) => [status, response.content?.['application/json']?.example as { outcome: string; effective_on: string | null }]),
  );
  assert.deepEqual([examples['200']?.outcome, examples['200']?.effective_on], ['completed', null], 'a 200 example is a completed action');
  assert.deepEqual([examples['202']?.outcome, typeof examples['202']?.effective_on], ['scheduled', 'string'], 'a 202 example is a scheduled cancel');

  // Profile B has no cancel: never a 202. Without a backend (a v1 upstream), both answers are named.
  assert.ok(!('202' in operation(openApiDocument({ profile: 'B' }) as Doc).responses));
  assert.match(String(operation(openApiDocument({ profile: 'A' }) as Doc).description), /202 with `effective_on`\) or ends the service at once \(200\)/);
});

t.test('OpenAPI document: the webhook answer\'s example is a state the gateway can be in', async () => {
  const document = openApiDocument({ profile: 'A' }) as Document;
  for (const method of ['get', 'put']) {
    const example = document.paths['/v1/webhooks']?.[method]?.responses['200']?.content?.['application/json']?.example as { status: string; disabled_reason: string | null };
    assert.deepEqual([example.status, example.disabled_reason], ['enabled', null], method);
  }
});
