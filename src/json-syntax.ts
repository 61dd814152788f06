/**
 * Why a file is not JSON, without quoting it: V8's messages quote the text around the error
 * ("Unexpected token 's', "…": secret1"… is not valid JSON"), and the file may hold a secret there.
 */
export function jsonSyntaxError(text: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const at = /^(.*?) in JSON at position (\d+)/.exec(message);
  if (at) {
    const before = text.slice(0, Number(at[2])).split('\n');
    return `${at[1]} at line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`;
  }
  if (/^Unexpected end of JSON input/.test(message)) return 'it ends too early';
  if (/^Unexpected token/.test(message)) return 'an unexpected character (the text around it is not shown: it may be a secret)';
  return 'a syntax error';
}
