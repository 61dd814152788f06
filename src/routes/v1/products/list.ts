import { z } from 'zod';
import { defineEndpoint } from '../../../http/endpoint.js';
import { type Product, ProductSchema } from '../../../v1/schemas.js';

/**
 * One frozen body per frozen catalog array: a backend that answers the same (cached, immutable)
 * array again gets the same body object back, whose output the pipeline then parses and
 * serialises only once (see outputOf in http/register.ts). A mutable array gets a fresh body.
 */
const bodies = new WeakMap<Product[], { readonly data: Product[] }>();

function bodyOf(products: Product[]): { readonly data: Product[] } {
  if (!Object.isFrozen(products)) return { data: products };
  let body = bodies.get(products);
  if (!body) {
    body = Object.freeze({ data: products });
    bodies.set(products, body);
  }
  return body;
}

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
  async handler({ deps, call }) {
    return { status: 200, body: bodyOf(await deps.backend.listProducts(call)) };
  },
});
