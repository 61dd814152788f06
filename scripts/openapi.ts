/**
 * `tsx scripts/openapi.ts [A|B|admin] [out.json] …`: writes the OpenAPI document the gateway serves
 * for a profile (default A), or the admin API's, for the linters (scripts/lint-openapi.mjs) and the
 * docs generator. Without a file it goes to standard output; more pairs of a document and its file
 * may follow, so that the linters' three documents cost one process.
 */
import { writeFileSync } from 'node:fs';
import { adminOpenApiDocument } from '../src/admin/routes/index.js';
import { openApiDocument } from '../src/app.js';

function documentOf(which: string | undefined): object {
  if (which === 'admin') return adminOpenApiDocument({ serverUrl: 'http://127.0.0.1:9464', profile: 'A' });
  const profile = which === 'B' ? 'B' : 'A';
  return openApiDocument({ profile, publicBaseUrl: 'http://127.0.0.1:3000', issuer: { name: 'Example Hosting Ltd.', email: 'billing@example.com', addressLines: [] } });
}

const args = process.argv.slice(2);
for (let at = 0; at === 0 || at < args.length; at += 2) {
  const text = `${JSON.stringify(documentOf(args[at]), null, 2)}\n`;
  const out = args[at + 1];
  if (out) writeFileSync(out, text);
  else process.stdout.write(text);
}
