/**
 * Examples for the OpenAPI document, built from the same JSON Schemas the document publishes: a
 * field's own `example` where the v1 schemas give one (ids, money, dates), else the first enum
 * value, else a value of the field's type. Built, not written by hand, so an example cannot drift
 * from its schema; Spectral (scripts/lint-openapi.mjs, run by npm test) checks each against it.
 */
type JsonSchema = Record<string, unknown>;

const FORMATS: Record<string, string> = {
  'date-time': '2026-01-31T12:00:00Z',
  date: '2026-01-31',
  uri: 'https://hooks.example.com/reseller',
  uuid: '0b7e7dbe-63c3-4bd5-8a3c-2f1d7b0c9a11',
  email: 'billing@example.com',
};

export function exampleOf(schema: JsonSchema, schemas: Record<string, JsonSchema>, name = 'value', depth = 0): unknown {
  if (depth > 40) return null; // only a recursive schema gets this deep
  const ref = schema.$ref;
  if (typeof ref === 'string') {
    const target = schemas[ref.replace('#/components/schemas/', '')];
    return target ? exampleOf(target, schemas, name, depth + 1) : null;
  }
  if ('example' in schema) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const options = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (options) {
    const concrete = options.find((option) => option.type !== 'null') ?? options[0];
    return concrete ? exampleOf(concrete, schemas, name, depth + 1) : null;
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
      return Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, exampleOf(value, schemas, key, depth + 1)]));
    }
    case 'array': {
      const items = schema.items as JsonSchema | undefined;
      return items ? [exampleOf(items, schemas, name, depth + 1)] : [];
    }
    case 'integer':
    case 'number':
      return Math.min(Math.max(1, Number(schema.minimum ?? 1)), Number(schema.maximum ?? Infinity));
    case 'boolean':
      return false;
    case 'string':
      return FORMATS[String(schema.format)] ?? `example-${name.replace(/_/g, '-')}`;
    default:
      return null;
  }
}
