/**
 * WHMCS HTML-encodes every input it stores, so names come back as `A &amp; B`; product descriptions
 * may also hold raw HTML. v1 carries plain text.
 */

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  ndash: '\u2013',
  mdash: '\u2014',
  hellip: '\u2026',
  euro: '\u20ac',
  pound: '\u00a3',
  copy: '\u00a9',
  reg: '\u00ae',
  trade: '\u2122',
};

const ENTITY = /&(#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[a-zA-Z]{2,8});/g;

function decodeEntity(match: string, body: string): string {
  if (body.startsWith('#')) {
    const codePoint = body[1] === 'x' || body[1] === 'X' ? Number.parseInt(body.slice(2), 16) : Number.parseInt(body.slice(1), 10);
    const isScalar = codePoint > 0 && codePoint <= 0x10ffff && (codePoint < 0xd800 || codePoint > 0xdfff);
    return isScalar ? String.fromCodePoint(codePoint) : match;
  }
  return NAMED_ENTITIES[body.toLowerCase()] ?? match;
}

/** Decodes entities in one pass: `&amp;lt;` becomes `&lt;`, never `<`. Unknown entities stay as they are. */
export function decodeEntities(text: string): string {
  // Most text holds none: no pass over it.
  return text.includes('&') ? text.replace(ENTITY, decodeEntity) : text;
}

// The patterns are linear: the text is the upstream's, and WHMCS bounds no description. No two
// runs of `\s*` can be adjacent (`<br` then spaces would backtrack quadratically); a run of blanks
// is tried from its first character only.
const BLOCK_END = /<\s*(?:br(?:\s*\/)?|\/\s*(?:p|div|li|h[1-6]|tr|ul|ol))\s*>/gi;
const TAG = /<\/?[a-zA-Z][^<>]*>/g;
const BLANKS_AT_LINE_END = /(?<![ \t])[ \t]+\n/g;

/** `<!-- … -->` removed by index, not by a lazy pattern that rescans the rest of the text from every unclosed `<!--`. */
function withoutComments(text: string): string {
  let out = '';
  let from = 0;
  for (let open = text.indexOf('<!--'); open !== -1; open = text.indexOf('<!--', from)) {
    const close = text.indexOf('-->', open + 4);
    if (close === -1) break; // unclosed: kept as it is
    out += text.slice(from, open);
    from = close + 3;
  }
  return out + text.slice(from);
}

/**
 * Plain text from a WHMCS description: entities decoded once, then tags removed (line-breaking ones
 * become newlines), because an admin may have typed HTML that WHMCS stored either raw or encoded.
 */
export function htmlToText(html: string): string {
  return withoutComments(decodeEntities(html))
    .replace(BLOCK_END, '\n')
    .replace(TAG, '')
    .replace(/\r\n?/g, '\n')
    .replace(BLANKS_AT_LINE_END, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** WHMCS's `internal|Display` naming convention for configurable options: the part shown is after the bar. */
export function displayName(raw: string): string {
  const bar = raw.indexOf('|');
  return (bar === -1 ? raw : raw.slice(bar + 1)).trim();
}
