/**
 * `tsx scripts/openapi.ts [A|B] [out.json]`: writes the OpenAPI document the gateway serves for a
 * profile (default A), for the linters (scripts/lint-openapi.mjs) and the docs generator.
 */
import { writeFileSync } from 'node:fs';
import { openApiDocument } from '../src/app.js';

const profile = process.argv[2] === 'B' ? 'B' : 'A';
const text = `${JSON.stringify(openApiDocument({ profile, publicBaseUrl: 'http://127.0.0.1:3000', issuer: { name: 'Example Hosting Ltd.', email: 'billing@example.com', addressLines: [] } }), null, 2)}\n`;
const out = process.argv[3];
if (out) writeFileSync(out, text);
else process.stdout.write(text);
