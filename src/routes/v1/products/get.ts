import { defineEndpoint } from '../../../http/endpoint.js';
import { ProductSchema } from '../../../v1/schemas.js';
import { IdParamsSchema } from '../params.js';

export default defineEndpoint({
  method: 'GET',
  url: '/v1/products/:id',
  operationId: 'getProduct',
  summary: 'Product details with configuration options',
  tag: 'Products',
  scope: 'read:products',
  params: IdParamsSchema,
  responses: { 200: { description: 'The product.', schema: ProductSchema } },
  errors: ['not_found'],
  async handler({ params, deps, call }) {
    // The backend's object itself: when it is a frozen, cached one, its output is computed once.
    return { status: 200, body: await deps.backend.getProduct(params.id, call) };
  },
});
