/**
 * The problem answers (RFC 9457) as the OpenAPI documents describe them: v1's (document.ts) and the
 * admin API's (src/admin/openapi.ts) answer from the same error table and the same error handler.
 */
import { defaultProblemTypeBase } from '../config.js';
import { reasonSpec, type AnyReason, type Reason } from '../errors.js';

type JsonSchema = Record<string, unknown>;
type Headers = Record<string, object>;

/** How one document describes its problem answers. */
export interface ProblemResponses {
  /** The components schema every problem answer points at. */
  schema: string;
  /** Headers on every answer. */
  headers: Headers;
  /** Headers a reason adds. */
  reasonHeaders: Partial<Record<AnyReason, Headers>>;
  /** Headers a status adds (the stored answers an idempotent operation replays). */
  statusHeaders?: Record<number, Headers>;
  /** The configured base of `type` (config `problemTypeBase`), so that the examples show the types answered. */
  typeBase?: string;
}

/** On a 415 for a body sent in a content coding (RFC 9110 §12.5.3): none is decoded. */
export const ACCEPT_ENCODING = { description: '`identity`: the body came in a content coding (`Content-Encoding: gzip`, …); send it uncoded.', schema: { type: 'string' } };

/** The reasons an endpoint's input implies (validation, the body's limits, the Idempotency-Key), in the documents' order. */
export function inputReasons(endpoint: { params?: unknown; query?: unknown; body?: unknown; idempotent?: boolean | undefined }): Reason[] {
  const reasons: Reason[] = [];
  // Any request can be refused before its input is read (a key in the query string, a header that cannot be read).
  reasons.push('invalid_request');
  if (endpoint.body) reasons.push('payload_too_large', 'unsupported_media_type');
  if (endpoint.idempotent) reasons.push('idempotency_key_missing', 'idempotency_key_invalid');
  return reasons;
}

function problemExample(reason: AnyReason, typeBase = defaultProblemTypeBase()): object {
  const requestId = '0b7e7dbe-63c3-4bd5-8a3c-2f1d7b0c9a11';
  const { status, title } = reasonSpec(reason);
  return { type: `${typeBase}${reason}`, title, status, detail: title, instance: `urn:uuid:${requestId}`, reason, request_id: requestId };
}

/** One response per status the reasons answer with, each naming its reasons, in status order. */
export function errorResponses(reasons: readonly AnyReason[], docs: ProblemResponses): Record<string, object> {
  const byStatus = new Map<number, AnyReason[]>();
  for (const reason of reasons) {
    const { status } = reasonSpec(reason);
    byStatus.set(status, [...(byStatus.get(status) ?? []), reason]);
  }
  const responses: Record<string, object> = {};
  for (const [status, group] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    responses[String(status)] = {
      description: group.map((reason) => `\`${reason}\`: ${reasonSpec(reason).title}`).join('; '),
      headers: Object.assign({}, docs.headers, docs.statusHeaders?.[status] ?? {}, ...group.map((reason) => docs.reasonHeaders[reason] ?? {})),
      content: { 'application/problem+json': { schema: { $ref: `#/components/schemas/${docs.schema}` }, example: problemExample(group[0] as AnyReason, docs.typeBase) } },
    };
  }
  return responses;
}

/** The problem document's schema: the fields every problem has, then `extra` (fields some reasons add). */
export function problemSchema(description: string, reasons: readonly string[], extra: Record<string, JsonSchema>): JsonSchema {
  return {
    type: 'object',
    description,
    required: ['type', 'title', 'status', 'detail', 'instance', 'reason', 'request_id'],
    properties: {
      type: { type: 'string', format: 'uri', description: 'The problem type: an absolute URI ending in `reason`. The gateway documents each type at `/problems/{reason}` on its public port (HTML, or JSON with `Accept: application/json`).' },
      title: { type: 'string' },
      status: { type: 'integer' },
      detail: { type: 'string' },
      instance: { type: 'string', description: '`urn:uuid:<request id>`' },
      reason: { type: 'string', enum: reasons },
      request_id: { type: 'string' },
      errors: {
        type: 'array',
        description: 'Validation errors: `pointer` is a JSON pointer into the body (`/field`; `""` for the body as a whole), or `/query/<name>`, `/path/<name>`.',
        items: { type: 'object', required: ['pointer', 'detail'], properties: { pointer: { type: 'string' }, detail: { type: 'string' } } },
      },
      required_scope: { type: 'string', description: 'With `insufficient_scope`.' },
      ...extra,
    },
  };
}
