import { z } from 'zod';
import { defineEndpoint } from '../../../http/endpoint.js';
import { ProductSchema } from '../../../v1/schemas.js';

export default defineEndpoint({
  method: 'GET',
  url: '/v1/products',
  operationId: 'listProducts',
  summary: 'Publicly listed products with prices',
  tag: 'Products',
  scope: 'read:products',
  responses: {
    200: { description: 'All publicly listed products.', schema: z.object({ data: z.array(ProductSchema) }).meta({ id: 'ProductList' }) },
  },
  errors: [],
  async handler({ services, requestId }) {
    return { status: 200, body: { data: await services.backend.listProducts({ requestId }) } };
  },
});
