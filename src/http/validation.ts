/** Input validation with the endpoint's zod schemas; failures become 400 invalid_request with pointers. */
import type { FastifyRequest, preParsingAsyncHookHandler } from 'fastify';
import { z } from 'zod';
import { compiled } from './compiled-schema.js';
import { ApiError, type FieldError } from '../errors.js';
import { readIdempotencyKey } from './idempotency.js';
import { looksSecret } from '../secret-like.js';

export type InputPart = 'path' | 'query' | 'body';

function pointer(part: InputPart, path: PropertyKey[]): string {
  // A name the client sent (an unknown field) is echoed, unless it is a key or token pasted as one.
  const segments = path.map((segment) => (looksSecret(String(segment)) ? '[redacted]' : String(segment).replace(/~/g, '~0').replace(/\//g, '~1')));
  // Body pointers point into the JSON body (contract §2: `/field`); path and query say which part.
  const prefix = part === 'body' ? [] : [part];
  // The body as a whole (an array, null, none at all) is the empty pointer (RFC 6901 §5): `/` would
  // name a member whose name is the empty string.
  return [...prefix, ...segments].map((segment) => `/${segment}`).join('');
}

/** The value the issue is about: zod leaves it out of its issues unless asked to report input. */
function valueAt(input: unknown, path: PropertyKey[]): unknown {
  let value = input;
  for (const segment of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<PropertyKey, unknown>)[segment];
  }
  return value;
}

function describe(issue: z.core.$ZodIssue, input: unknown): string {
  if (issue.code === 'invalid_type' && valueAt(input, issue.path) === undefined) return 'is required';
  return issue.message;
}

function fieldErrors(part: InputPart, error: z.ZodError, input: unknown): FieldError[] {
  return error.issues
    .flatMap((issue) =>
      issue.code === 'unrecognized_keys'
        ? issue.keys.map((key) => ({ pointer: pointer(part, [...issue.path, key]), detail: 'is not a field of this request' }))
        : [{ pointer: pointer(part, issue.path), detail: describe(issue, input) }],
    )
    .slice(0, 20);
}

/**
 * The query schema's parameters sent as a list: in PHP's or Rails' spelling (`per_page[]=5`,
 * `page[0]=2`), or more than once. The first was ignored as a name the endpoint does not take, and
 * the client silently got page 1 at the default size; the second was refused as "not a number".
 * Names the schema does not know at all are still ignored (pagination.ts).
 */
function listedParameters(schema: z.ZodType, query: Record<string, unknown>): FieldError[] {
  if (!(schema instanceof z.ZodObject)) return [];
  const errors: FieldError[] = [];
  for (const name in query) {
    const bracket = name.indexOf('[');
    const known = bracket > 0 ? name.slice(0, bracket) : name;
    if (!Object.hasOwn(schema.shape, known)) continue;
    if (bracket > 0) errors.push({ pointer: pointer('query', [name]), detail: `is not a parameter of this request; send ${known}=<value>, once` });
    else if (Array.isArray(query[name])) errors.push({ pointer: pointer('query', [name]), detail: 'is given more than once; send it once' });
  }
  return errors;
}

export function parseInput<T extends z.ZodType>(schema: T, value: unknown, part: InputPart): z.infer<T> {
  // An empty query (most requests) has no name to look at.
  const listed = part === 'query' ? listedParameters(schema, value as Record<string, unknown>) : [];
  if (listed.length > 0) throw new ApiError('invalid_request', 'The query string is invalid.', { errors: listed.slice(0, 20) });
  const result = compiled(schema).safeParse(value);
  if (result.success) return result.data;
  // An empty segment where an id goes (`/v1/services/`, a trailing slash) is a path no route serves
  // (contract §2: 404); the router only matched it as one with an empty parameter.
  if (part === 'path' && Object.values(value as Record<string, unknown>).includes('')) throw new ApiError('not_found', 'No such resource.');
  const errors = fieldErrors(part, result.error, value);
  const where = part === 'body' ? 'request body' : part === 'query' ? 'query string' : 'path';
  throw new ApiError('invalid_request', `The ${where} is invalid.`, { errors });
}

/** A request's validated parts, as v1 and admin handlers receive them. */
export interface RequestInput {
  params: unknown;
  query: unknown;
  body: unknown;
  idempotencyKey: string | undefined;
}

/** What an endpoint declares of its input: a schema per part, and whether it takes an Idempotency-Key. */
export interface InputSchemas {
  params?: z.ZodType | undefined;
  query?: z.ZodType | undefined;
  body?: z.ZodType | undefined;
  idempotent?: boolean | undefined;
}

export function readRequestInput(endpoint: InputSchemas, request: FastifyRequest): RequestInput {
  return {
    params: endpoint.params ? parseInput(endpoint.params, request.params, 'path') : {},
    query: endpoint.query ? parseInput(endpoint.query, request.query ?? {}, 'query') : {},
    body: endpoint.body ? parseInput(endpoint.body, request.body, 'body') : undefined,
    idempotencyKey: endpoint.idempotent ? readIdempotencyKey(request.headers['idempotency-key']) : undefined,
  };
}

/**
 * The Idempotency-Key check of an idempotent endpoint, run before its body is read (a preParsing
 * hook): the header alone decides it, so a client waiting for 100 Continue (expectations.ts) is
 * refused before it uploads the body, and every client gets the same answer whatever its body.
 */
export const idempotencyKeyBeforeBody: preParsingAsyncHookHandler = async (request, _reply, payload) => {
  readIdempotencyKey(request.headers['idempotency-key']);
  return payload;
};
