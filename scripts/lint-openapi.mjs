// `npm run lint:openapi`: the OpenAPI document of each profile, and the admin API's, through Redocly
// (recommended rules, redocly.yaml) and Spectral (spectral:oas, .spectral.yaml); any error or
// warning fails. Both tools are pinned dev dependencies; test/openapi/lint.test.ts runs this in
// `npm test`. Each tool lints the three documents in one run: a run's start-up (1–1.5 s) is most
// of what it costs.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };
const bin = (name) => join('node_modules', '.bin', name);
const DOCUMENTS = [
  { which: 'A', label: 'profile A' },
  { which: 'B', label: 'profile B' },
  { which: 'admin', label: 'admin API' },
];

function run(command, args) {
  const result = spawnSync(command, args, { env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.error) throw result.error;
  return result;
}

function noReport(tool, result) {
  return new Error(`${tool} gave no JSON report (exit ${result.status}):\n${result.stdout}\n${result.stderr}`);
}

function parseJson(tool, result, text = result.stdout) {
  try {
    return JSON.parse(text);
  } catch {
    throw noReport(tool, result);
  }
}

/** Redocly's JSON report of several files: one object per file, in their order, written back to back. */
function splitReports(text) {
  const reports = [];
  let depth = 0;
  let inString = false;
  let start = -1;
  for (let at = 0; at < text.length; at += 1) {
    const char = text[at];
    if (inString) {
      if (char === '\\') at += 1;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{') {
      if (depth === 0) start = at;
      depth += 1;
    } else if (char === '}') {
      depth -= 1;
      if (depth === 0) reports.push(text.slice(start, at + 1));
    }
  }
  return reports;
}

const dir = mkdtempSync(join(tmpdir(), 'rg-openapi-'));
let problems = 0;
try {
  const files = DOCUMENTS.map(({ which }) => resolve(dir, `openapi-${which}.json`));
  const generated = run(process.execPath, ['--import', 'tsx', 'scripts/openapi.ts', ...DOCUMENTS.flatMap(({ which }, index) => [which, files[index]])]);
  if (generated.status !== 0) throw new Error(`generating the documents failed:\n${generated.stderr}`);

  const redoclyRun = run(bin('redocly'), ['lint', '--config', 'redocly.yaml', '--format=json', ...files]);
  const redocly = splitReports(redoclyRun.stdout).map((text) => parseJson('redocly', redoclyRun, text));
  if (redocly.length !== files.length) throw noReport('redocly', redoclyRun);

  const report = join(dir, 'spectral.json');
  const spectralRun = run(bin('spectral'), ['lint', '--ruleset', '.spectral.yaml', '--format=json', '--output', report, ...files]);
  const spectral = parseJson('spectral', spectralRun, existsSync(report) ? readFileSync(report, 'utf8') : '');

  for (const [index, { which, label }] of DOCUMENTS.entries()) {
    const { totals, problems: found } = redocly[index];
    for (const p of found) console.log(`redocly  ${which} ${p.severity} ${p.ruleId}: ${p.message} (${p.location?.[0]?.pointer ?? ''})`);
    const mine = spectral.filter((p) => resolve(p.source) === files[index]);
    for (const p of mine) console.log(`spectral ${which} severity=${p.severity} ${p.code}: ${p.message} (${p.path.join('.')})`);
    problems += totals.errors + totals.warnings + mine.length;
    console.log(`${label}: redocly ${totals.errors} errors, ${totals.warnings} warnings; spectral ${mine.length} problems`);
  }
  // A problem Spectral placed in none of the documents (a ruleset's own) still fails the lint.
  const elsewhere = spectral.filter((p) => !files.includes(resolve(p.source ?? '')));
  for (const p of elsewhere) console.log(`spectral ${p.source ?? '?'} severity=${p.severity} ${p.code}: ${p.message}`);
  problems += elsewhere.length;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(problems === 0 ? 0 : 1);
