import { z } from 'zod';
import { defineLocalEndpoint } from '../../http/endpoint.js';

/** The document describes every endpoint, this one included, so it is handed in once all exist. */
export function openApiEndpoint(document: () => object) {
  return defineLocalEndpoint({
    method: 'GET',
    url: '/v1/openapi.json',
    operationId: 'getOpenApi',
    summary: 'This OpenAPI document',
    tag: 'System',
    scope: 'public',
    responses: { 200: { description: 'The OpenAPI 3.1 document of the v1 contract.', schema: z.record(z.string(), z.unknown()) } },
    errors: [],
    async handler() {
      return { status: 200, body: document() };
    },
  });
}
