/**
 * `tsx scripts/openapi.ts [A|B|admin] [out.json]`: writes the OpenAPI document the gateway serves
 * for a profile (default A), or the admin API's, for the linters (scripts/lint-openapi.mjs) and the
 * docs generator.
 */
import { writeFileSync } from 'node:fs';
import { adminOpenApiDocument } from '../src/admin/routes/index.js';
import { openApiDocument } from '../src/app.js';

const which = process.argv[2];
const profile = which === 'B' ? 'B' : 'A';
const document =
  which === 'admin'
    ? adminOpenApiDocument('http://127.0.0.1:9464')
    : openApiDocument({ profile, publicBaseUrl: 'http://127.0.0.1:3000', issuer: { name: 'Example Hosting Ltd.', email: 'billing@example.com', addressLines: [] } });
const text = `${JSON.stringify(document, null, 2)}\n`;
const out = process.argv[3];
if (out) writeFileSync(out, text);
else process.stdout.write(text);
