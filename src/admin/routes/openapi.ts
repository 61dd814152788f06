import { z } from 'zod';
import { defineAdminEndpoint } from '../endpoint.js';

/** The document describes every admin endpoint, this one included, so it is handed in once all exist. */
export function adminOpenApiEndpoint(document: () => object) {
  return defineAdminEndpoint({
    method: 'GET',
    url: '/admin/v1/openapi.json',
    operationId: 'getAdminOpenApi',
    summary: 'This OpenAPI document',
    tag: 'System',
    scope: 'any',
    responses: { 200: { description: 'The OpenAPI 3.1 document of the admin API.', schema: z.record(z.string(), z.unknown()) } },
    errors: [],
    async handler() {
      return { status: 200, body: document() };
    },
  });
}
