/**
 * `npm run docs`: renders the generated tables of docs/*.md from the code (the OpenAPI document,
 * src/errors.ts, the scopes, the profiles' action sets, the config defaults). Each table sits
 * between `<!-- BEGIN GENERATED: name -->` and `<!-- END GENERATED: name -->`; the text around them
 * is written by hand. `--check` changes nothing and exits 1 when a file is out of date
 * (test/docs/docs.test.ts runs it).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApiDocument } from '../src/app.js';
import { ConfigSchema } from '../src/config.js';
import { REASONS } from '../src/errors.js';
import { SCOPES } from '../src/keys/scopes.js';
import { PROFILE_ACTIONS } from '../src/v1/schemas.js';

type Operation = { summary: string; 'x-required-scope': string; parameters?: Array<{ name: string; in: string }>; responses: Record<string, unknown> };

function table(header: string[], rows: string[][]): string {
  return [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');
}

function endpoints(): string {
  const doc = openApiDocument({ profile: 'A' }) as { paths: Record<string, Record<string, Operation>> };
  const rows = Object.entries(doc.paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, op]) => {
      const scope = op['x-required-scope'];
      const success = Object.keys(op.responses).filter((status) => Number(status) < 300).join(', ');
      const idempotent = op.parameters?.some((p) => p.name === 'Idempotency-Key') ? 'yes' : '';
      return [`\`${method.toUpperCase()} ${path}\``, scope === 'public' ? 'none' : scope === 'any' ? 'any key' : `\`${scope}\``, op.summary, success, idempotent];
    }),
  );
  return table(['Endpoint', 'Scope', 'What it does', 'Success', 'Idempotency-Key'], rows);
}

function errors(): string {
  return table(['Status', 'reason', 'title'], Object.entries(REASONS).map(([reason, { status, title }]) => [String(status), `\`${reason}\``, title]));
}

function scopes(): string {
  return SCOPES.map((scope) => `\`${scope}\``).join(', ');
}

function profiles(): string {
  const defaults = ConfigSchema.parse({}).idempotency;
  const hours = (ms: number) => `${ms / 3_600_000} h`;
  return table(['', 'Profile A', 'Profile B'], [
    ['Service actions', PROFILE_ACTIONS.A.map((a) => `\`${a}\``).join(', '), PROFILE_ACTIONS.B.map((a) => `\`${a}\``).join(', ')],
    ['Idempotency', `replays for ${hours(defaults.replayWindowMs)}, then 410 \`replay_stale\` (remembered ${hours(defaults.staleRetentionMs)})`, `records live ${hours(defaults.profileBWindowMs)}, then the key is new`],
    ['Account limit', 'yes', 'none'],
  ]);
}

function limits(): string {
  const r = ConfigSchema.parse({}).rateLimits;
  return table(['Policy', 'Default', 'Counted how'], [
    ['`key_minute`', `${r.keyPerMinute} per minute sustained, burst ${r.keyBurst}`, `token bucket (GCRA): ${r.keyBurst + 1} at once from rest, then one per ${60 / r.keyPerMinute} s`],
    ['`key_day`', `${r.keyPerDay} per UTC day`, 'calendar day, resets at 00:00 UTC'],
    ['`account_minute`', `${r.accountPerMinute} per minute (Profile A)`, 'any rolling 60 s, across the account\'s keys'],
    ['`ip_minute`', `${r.ipPerMinute} per minute`, `any rolling 60 s, every request, before authentication (IPv6 per /${r.ipv6PrefixLength})`],
  ]);
}

const GENERATORS: Record<string, () => string> = { endpoints, errors, scopes, profiles, limits };

export function render(text: string): string {
  return text.replace(/(<!-- BEGIN GENERATED: (\w+) -->\n)[\s\S]*?(<!-- END GENERATED: \2 -->)/g, (_all, begin: string, name: string, end: string) => {
    const generate = GENERATORS[name];
    if (!generate) throw new Error(`no generator named ${name}`);
    return `${begin}${generate()}\n${end}`;
  });
}

const check = process.argv.includes('--check');
let stale = 0;
for (const file of readdirSync('docs').filter((name) => name.endsWith('.md')).map((name) => join('docs', name))) {
  const text = readFileSync(file, 'utf8');
  const rendered = render(text);
  if (rendered === text) continue;
  if (check) {
    stale++;
    console.log(`${file} is out of date: run npm run docs`);
  } else writeFileSync(file, rendered);
}
process.exit(stale === 0 ? 0 : 1);
