/**
 * Text for the invoice PDF: untrusted strings made drawable by the fonts chosen (fonts.ts), wrapped
 * and cut to a width with the font drawn, and money and dates as printed.
 */
import type { PDFFont } from 'pdf-lib';
import type { Money } from '../v1/schemas.js';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Letters that NFKD leaves whole but that have an obvious Latin fallback. */
const LATIN_FALLBACKS: Record<string, string> = { Ł: 'L', ł: 'l', Đ: 'D', đ: 'd', Ħ: 'H', ħ: 'h', ı: 'i', Ŧ: 'T', ŧ: 't' };

/** Turns untrusted strings into text the chosen fonts can draw (`encodable`: their code points). */
export class PlainText {
  /** What each character outside the font became: the same few recur, and NFKD is not cheap. */
  private readonly fallbacks = new Map<string, string>();

  constructor(private readonly encodable: ReadonlySet<number>) {}

  /** One line: whitespace and control characters collapse to single spaces. */
  line(raw: string, maxLength: number): string {
    return this.encode(clip(raw, maxLength)).replace(/\s+/g, ' ').trim();
  }

  /** Several lines: line breaks survive; blank lines only separate (one at most, none at the ends). */
  lines(raw: string, maxLength: number): string[] {
    const lines = clip(raw, maxLength)
      .split(/\r\n|\r|\n/)
      .map((line) => this.encode(line).replace(/\s+/g, ' ').trim());
    const kept = lines.filter((line, index) => line !== '' || (index > 0 && lines[index - 1] !== ''));
    if (kept.at(-1) === '') kept.pop();
    return kept;
  }

  private encode(raw: string): string {
    let out = '';
    for (const char of raw) {
      // Format characters are invisible (an embedded font has glyphs for some, bidi overrides among them): dropped.
      if (/\p{Cf}/u.test(char)) continue;
      if (this.canEncode(char)) out += char;
      else if (/[\p{Cc}\p{Z}]/u.test(char)) out += ' ';
      else out += this.fallback(char);
    }
    return out;
  }

  /** Accented letters lose their accents (NFKD, marks dropped); anything else becomes '?'. */
  private fallback(char: string): string {
    const known = this.fallbacks.get(char);
    if (known !== undefined) return known;
    const base = (LATIN_FALLBACKS[char] ?? char.normalize('NFKD')).replace(/\p{M}/gu, '');
    const drawn = base !== '' && [...base].every((part) => this.canEncode(part)) ? base : '?';
    this.fallbacks.set(char, drawn);
    return drawn;
  }

  private canEncode(char: string): boolean {
    return this.encodable.has(char.codePointAt(0) ?? -1);
  }
}

/**
 * Cuts a string before any real work is done on it; the ellipsis shows that something was cut.
 * Composed (NFC): a letter sent as base and combining accent is the font's accented letter.
 */
function clip(raw: string, maxLength: number): string {
  return (raw.length > maxLength ? `${raw.slice(0, maxLength)}…` : raw).normalize('NFC');
}

/**
 * Greedy word wrap; a word wider than the line is broken between characters. Widths are added up
 * as the line grows (only the pair at each join is measured again, for its kerning), so a line
 * costs time in proportion to its length: re-measuring the whole line for every character or word
 * made a long description cost its length times the line's, seconds for one large invoice.
 */
export function wrap(line: string, font: PDFFont, size: number, width: number): string[] {
  if (line === '') return [''];
  // Characters and pairs recur: each is measured once (pdf-lib's measure costs far more than a lookup).
  const known = new Map<string, number>();
  const measure = (text: string): number => {
    let measured = known.get(text);
    if (measured === undefined) {
      measured = font.widthOfTextAtSize(text, size);
      if (text.length <= 4) known.set(text, measured);
    }
    return measured;
  };
  /** The width of a text ending in `last`, followed by `next`: only the pair at the join is measured again. */
  const joined = (leftWidth: number, last: string, next: string, nextWidth: number): number => {
    if (last === '' || next === '') return leftWidth + nextWidth;
    const first = String.fromCodePoint(next.codePointAt(0) as number);
    return leftWidth + nextWidth + measure(last + first) - measure(last) - measure(first);
  };
  /** Sums can differ from one measure in the last bits: at the edge, the text is measured whole. */
  const fits = (text: () => string, summed: number): boolean =>
    Math.abs(summed - width) > 1e-6 ? summed <= width : font.widthOfTextAtSize(text(), size) <= width;
  /**
   * A word's width from its characters and the pairs at their joins: an embedded font's measure
   * shapes the text (fontkit's layout), and measuring each word whole made a large invoice in
   * Cyrillic take ten times as long as in Latin; the edge is still measured whole (fits).
   */
  const wordWidth = (word: string): number => {
    if (word.length <= 4) return measure(word);
    let summed = 0;
    let previous = '';
    for (const char of word) {
      summed = joined(summed, previous, char, measure(char));
      previous = char;
    }
    return summed;
  };
  const space = measure(' ');
  const lines: string[] = [];
  let current = '';
  let currentWidth = 0;
  let last = ''; // current's last character
  for (const word of line.split(' ')) {
    const measuredWord = wordWidth(word);
    const candidateWidth = current === '' ? measuredWord : joined(joined(currentWidth, last, ' ', space), ' ', word, measuredWord);
    if (fits(() => (current === '' ? word : `${current} ${word}`), candidateWidth)) {
      if (word !== '') last = lastChar(word);
      else if (current !== '') last = ' ';
      current = current === '' ? word : `${current} ${word}`;
      currentWidth = candidateWidth;
      continue;
    }
    if (current !== '') lines.push(current);
    current = '';
    currentWidth = 0;
    last = '';
    for (const char of word) {
      const charWidth = measure(char);
      const next = joined(currentWidth, last, char, charWidth);
      if (current !== '' && !fits(() => current + char, next)) {
        lines.push(current);
        current = char;
        currentWidth = charWidth;
      } else {
        current += char;
        currentWidth = next;
      }
      last = char;
    }
  }
  lines.push(current);
  return lines;
}

/** The last character (code point) of a non-empty string. */
function lastChar(text: string): string {
  const low = text.charCodeAt(text.length - 1);
  return low >= 0xdc00 && low <= 0xdfff && text.length > 1 ? text.slice(-2) : text.slice(-1);
}

/** Keeps the first `max` lines, marking the last one when more were dropped. */
export function limitLines(lines: string[], max: number, font: PDFFont, size: number, width: number): string[] {
  if (lines.length <= max) return lines;
  const kept = lines.slice(0, max);
  kept[max - 1] = fit(`${kept[max - 1]} …`, font, size, width);
  return kept;
}

/** Shortens a single line to the width, marking the cut with an ellipsis. */
export function fit(line: string, font: PDFFont, size: number, width: number): string {
  if (font.widthOfTextAtSize(line, size) <= width) return line;
  const chars = [...line];
  while (chars.length > 0 && font.widthOfTextAtSize(`${chars.join('')}…`, size) > width) chars.pop();
  return `${chars.join('').trimEnd()}…`;
}

/** "1234.50" + "EUR" → "1,234.50 EUR", by string surgery: money is never a float. */
export function formatMoney(money: Money, text: PlainText): string {
  const currency = text.line(money.currency, 8);
  const match = /^(-?)(\d{1,40})(\.\d{1,12})$/.exec(money.amount);
  if (match === null) return `${text.line(money.amount, 40)} ${currency}`;
  const [, sign, whole = '', fraction] = match;
  return `${sign}${whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}${fraction} ${currency}`;
}

/** "2026-01-31" → "31 Jan 2026"; missing or malformed dates print as a dash. */
export function formatDate(value: string | null): string {
  const date = parseDate(value);
  if (date === null) return '—';
  return `${date.getUTCDate()} ${MONTHS[date.getUTCMonth()]} ${date.getUTCFullYear()}`;
}

export function parseDate(value: string | null): Date | null {
  if (value === null || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return null;
  const date = new Date(`${value}T00:00:00Z`);
  return Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value ? null : date;
}
