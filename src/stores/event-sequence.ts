/**
 * Where an event's sequence number goes in its body: a last member, `"sequence":<n>`, before the
 * object's closing brace, everything else byte for byte (the body is signed as stored).
 */
export interface SequenceSlot {
  /** The body up to the number, its separator included. */
  head: string;
  tail: string;
}

export function sequenceSlot(body: string): SequenceSlot {
  const end = body.lastIndexOf('}');
  if (!body.trimStart().startsWith('{') || end < 0) throw new Error('an event body to number must be a JSON object');
  const before = body.slice(0, end);
  // In a JSON object only an empty one has "{" right before its closing brace.
  const separator = before.trimEnd().endsWith('{') ? '' : ',';
  return { head: `${before}${separator}"sequence":`, tail: body.slice(end) };
}

export function numberedBody(body: string, sequence: number): string {
  const { head, tail } = sequenceSlot(body);
  return `${head}${sequence}${tail}`;
}

/**
 * How long an event's number is kept by its id: an event queued again within it (an enqueue retried
 * after its reply was lost, a change reported again) gets its number again, not a new one.
 */
export const EVENT_NUMBER_KEPT_MS = 86_400_000;
