// `npm run lint:openapi`: the OpenAPI document of each profile, and the admin API's, through Redocly
// (recommended rules, redocly.yaml) and Spectral (spectral:oas, .spectral.yaml); any error or
// warning fails. Both tools
// are pinned dev dependencies; test/openapi/lint.test.ts runs this in `npm test`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
const bin = (name) => join('node_modules', '.bin', name);

function run(command, args) {
  const result = spawnSync(command, args, { env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw result.error;
  return result;
}

function parseJson(tool, result, text = result.stdout) {
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${tool} gave no JSON report (exit ${result.status}):\n${result.stdout}\n${result.stderr}`);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'rg-openapi-'));
let problems = 0;
try {
  for (const profile of ['A', 'B', 'admin']) {
    const label = profile === 'admin' ? 'admin API' : `profile ${profile}`;
    const file = join(dir, `openapi-${profile}.json`);
    const generated = run(process.execPath, ['--import', 'tsx', 'scripts/openapi.ts', profile, file]);
    if (generated.status !== 0) throw new Error(`generating profile ${profile} failed:\n${generated.stderr}`);

    const redocly = parseJson('redocly', run(bin('redocly'), ['lint', '--config', 'redocly.yaml', '--format=json', file]));
    for (const p of redocly.problems) console.log(`redocly  ${profile} ${p.severity} ${p.ruleId}: ${p.message} (${p.location?.[0]?.pointer ?? ''})`);
    problems += redocly.totals.errors + redocly.totals.warnings;

    const report = join(dir, `spectral-${profile}.json`);
    const spectralRun = run(bin('spectral'), ['lint', '--ruleset', '.spectral.yaml', '--format=json', '--output', report, file]);
    const spectral = parseJson('spectral', spectralRun, existsSync(report) ? readFileSync(report, 'utf8') : '');
    for (const p of spectral) console.log(`spectral ${profile} severity=${p.severity} ${p.code}: ${p.message} (${p.path.join('.')})`);
    problems += spectral.length;
    console.log(`${label}: redocly ${redocly.totals.errors} errors, ${redocly.totals.warnings} warnings; spectral ${spectral.length} problems`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(problems === 0 ? 0 : 1);
