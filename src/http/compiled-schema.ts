/**
 * zod's compiled parser for a schema (`z.compile`), made once per schema. It gives the same output
 * and the same issues as the schema's own parser, and on the v1 schemas (objects and lists of plain
 * fields) it is 3-4 times faster with a seventh of the allocation (`npm run bench:parsing`): every
 * request's input and every JSON answer go through it. The schema itself stays what the OpenAPI
 * document is made from. Upstream answers are not compiled: their fields are transforms, each still
 * a call in one large function, and on the larger ones the compiled parser was the slower.
 */
import { z } from 'zod';

const compiledSchemas = new WeakMap<z.ZodType, z.ZodType>();

export function compiled<T extends z.ZodType>(schema: T): T {
  let found = compiledSchemas.get(schema) as T | undefined;
  if (found === undefined) compiledSchemas.set(schema, (found = z.compile(schema)));
  return found;
}
