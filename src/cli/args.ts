/**
 * The key CLI's command line: its options, which of them each command takes, and the checks of
 * their values. A value is checked with the admin API's own schema (src/admin/schemas.ts): the CLI
 * takes what the API takes, and refuses what it refuses (exit 64, the API's 400).
 */
import { parseArgs } from 'node:util';
import type { z } from 'zod';
import type { AuditSubject } from '../admin/endpoint.js';

export class UsageError extends Error {}

/**
 * What a command prints: a line for people, a value for --json. The value is the admin API's answer
 * for the same record (its views in src/admin/schemas.ts): scripts read both alike.
 */
export interface Output {
  text: string;
  json: unknown;
  /** What the result names for the audit record beyond the arguments (the key made, its account). */
  subject?: AuditSubject;
}

const OPTIONS = {
  account: { type: 'string' },
  name: { type: 'string' },
  'upstream-id': { type: 'string' },
  scopes: { type: 'string' },
  expires: { type: 'string' },
  'per-minute': { type: 'string' },
  burst: { type: 'string' },
  'per-day': { type: 'string' },
  grace: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

type OptionName = keyof typeof OPTIONS;

export function parse(argv: string[]) {
  try {
    return parseArgs({ args: argv, allowPositionals: true, strict: true, options: OPTIONS });
  } catch (error) {
    // node:util's own messages (unknown option, missing value) are fine; its stack is not.
    throw new UsageError((error as Error).message);
  }
}

export type CliValues = ReturnType<typeof parse>['values'];

/**
 * What each command takes besides --json and --help: its options, and how many words it is with
 * its argument. Anything else is refused, as the admin API's strict bodies refuse a field they do
 * not take: `revoke <key> --grace 3600` dropping the grace would revoke the key at once.
 */
const TAKES: Record<string, { options: OptionName[]; words: number }> = {
  'account add': { options: ['name', 'upstream-id'], words: 3 },
  'account update': { options: ['name', 'upstream-id'], words: 3 },
  'account list': { options: [], words: 2 },
  'account disable': { options: [], words: 3 },
  'account enable': { options: [], words: 3 },
  'account delete': { options: [], words: 3 },
  issue: { options: ['account', 'name', 'scopes', 'expires', 'per-minute', 'burst', 'per-day'], words: 1 },
  list: { options: ['account'], words: 1 },
  rotate: { options: ['grace'], words: 2 },
  revoke: { options: [], words: 2 },
  'admin-token create': { options: ['name', 'scopes'], words: 2 },
  'webhook-secrets reseal': { options: [], words: 2 },
};

/** Refuses an option or an argument the command does not take; an unknown subcommand is left to the command's own usage error. */
export function checkTaken(positionals: string[], values: CliValues): void {
  const [command = '', sub = ''] = positionals;
  const name = TAKES[`${command} ${sub}`] ? `${command} ${sub}` : command;
  const takes = TAKES[name];
  if (!takes) return;
  const extra = positionals.slice(takes.words);
  // Not echoed: a pasted key may be among them.
  if (extra.length > 0) throw new UsageError(`too many arguments for ${name}`);
  const given = (Object.keys(values) as OptionName[]).filter((option) => option !== 'json' && option !== 'help');
  const stray = given.filter((option) => !takes.options.includes(option));
  if (stray.length > 0) throw new UsageError(`${name} does not take ${stray.map((option) => `--${option}`).join(', ')}`);
}

export function parseScopes<S extends string>(raw: string | undefined, known: readonly S[]): S[] {
  if (!raw) throw new UsageError('--scopes is required');
  if (raw === 'all') return [...known];
  const scopes = raw.split(',').map((s) => s.trim());
  const unknown = scopes.filter((s) => !(known as readonly string[]).includes(s));
  if (unknown.length > 0) throw new UsageError(`unknown scope(s): ${unknown.join(', ')}`);
  return scopes as S[];
}

export function wholeNumber(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw)) throw new UsageError(`--${name} must be a whole number`);
  return Number(raw);
}

/** A limit override in decimal digits, checked with the admin API's own schema (whole, safe, its minimum). */
export function limit(name: string, raw: string | undefined, schema: z.ZodType<number | undefined>): number | undefined {
  const value = wholeNumber(name, raw);
  if (value === undefined) return undefined;
  const result = schema.safeParse(value);
  if (!result.success) throw new UsageError(`--${name} ${result.error.issues[0]?.message ?? 'is invalid'}`);
  return value;
}

/** An option's text checked with the admin API's own schema: the CLI takes what the API takes. */
export function text(what: string, raw: string, schema: z.ZodType<string>): string {
  const result = schema.safeParse(raw);
  if (!result.success) throw new UsageError(`${what} ${result.error.issues[0]?.message ?? 'is invalid'}`);
  return result.data;
}
