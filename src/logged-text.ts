/**
 * What the application log keeps of the text it is given. An upstream's own words reach it (an error
 * message, an excerpt of a page, a provisioning module's text, an error's cause): they may quote the
 * customer (a database's "Duplicate entry 'jane@example.com'", FOSSBilling's ":email is already
 * registered") and may run to megabytes, on every request while the upstream is broken. So every
 * text is cut to a few hundred characters, with a marker, and email addresses in it are masked.
 * Other personal data (names, host names) cannot be told from ordinary words: see README,
 * Operations.
 */
import { pino } from 'pino';

/** The most kept of one field's text; an operator message is a prefix and an excerpt of 200 characters. */
export const MAX_LOGGED_TEXT = 500;
/** The most kept of a line's message: the gateway's own sentence, which may quote a detail and its fix (doctor). */
const MAX_LOGGED_MESSAGE = 2_000;
/** A stack: its lines cut one by one (the first is the message), then the whole. */
const MAX_STACK_LINES = 40;
const MAX_STACK = 4_000;
/** How deep a logged object is walked: the gateway's fields are flat, with a level or two below. */
const MAX_DEPTH = 4;

/** The longest email address (RFC 5321's path limit): masking looks that far past the cut. */
const LONGEST_EMAIL = 254;
const EMAIL = /[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}{2,}/gu;

/**
 * `text` with its email addresses masked, cut to `max` characters with a marker. Masked before the
 * cut (no address is left in part), over a window just past it (a text of megabytes is not scanned).
 */
export function loggedText(text: string, max = MAX_LOGGED_TEXT): string {
  const cut = text.length > max;
  const masked = (text.length > max + LONGEST_EMAIL ? text.slice(0, max + LONGEST_EMAIL) : text).replace(EMAIL, '[email]');
  return cut ? `${masked.slice(0, max)}… [cut, ${text.length} characters]` : masked;
}

/**
 * A logged value with its texts bounded: plain objects and arrays are copied, walked a few levels
 * down. Anything else (a request, a reply, an error) is left to its serializer.
 */
export function loggedValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return loggedText(value);
  if (typeof value !== 'object' || value === null || depth >= MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((each) => loggedValue(each, depth + 1));
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  const copy: Record<string, unknown> = {};
  for (const [name, each] of Object.entries(value)) copy[name] = loggedValue(each, depth + 1);
  return copy;
}

function loggedStack(stack: string): string {
  const lines = stack.split('\n', MAX_STACK_LINES + 1);
  const kept = lines.slice(0, MAX_STACK_LINES).map((line) => loggedText(line));
  if (lines.length > MAX_STACK_LINES) kept.push('    … [more lines cut]');
  return loggedText(kept.join('\n'), MAX_STACK);
}

/**
 * The command an ioredis error names: its name and how many arguments, not the arguments. Those are
 * a SET's value or a script's keys and arguments: an idempotency record's stored answer (which may
 * carry a service's password), a webhook event's body, a key record.
 */
function loggedCommand(command: unknown): unknown {
  if (typeof command !== 'object' || command === null) return loggedValue(command);
  const { name, args } = command as { name?: unknown; args?: unknown };
  return { name: loggedValue(name), args: Array.isArray(args) ? `[${args.length} arguments not logged]` : '[not logged]' };
}

/**
 * pino's error serializer (message and stack with their causes', every enumerable field), its texts
 * bounded: a BackendError carries the upstream's words in `operatorMessage` and `upstreamMessage`.
 */
export function loggedError(error: unknown): unknown {
  const serialized = pino.stdSerializers.err(error as Error) as unknown;
  if (typeof serialized !== 'object' || serialized === null) return loggedValue(serialized);
  const fields = serialized as Record<string, unknown>;
  for (const [name, value] of Object.entries(fields)) {
    if (name === 'stack' && typeof value === 'string') fields.stack = loggedStack(value);
    else if (name === 'aggregateErrors' && Array.isArray(value)) fields.aggregateErrors = value.slice(0, 5).map(loggedError);
    else if (name === 'command') fields.command = loggedCommand(value);
    else fields[name] = loggedValue(value, 1);
  }
  return fields;
}

/**
 * pino's hook around every line written through it (not the access line, whose fields are the
 * gateway's own): the fields' texts and the message bounded.
 */
export function boundedLogMethod(this: pino.Logger, args: unknown[], method: pino.LogFn): void {
  const bounded = args.map((arg) => (typeof arg === 'string' ? loggedText(arg, MAX_LOGGED_MESSAGE) : loggedValue(arg)));
  (method as (...given: unknown[]) => void).apply(this, bounded);
}
