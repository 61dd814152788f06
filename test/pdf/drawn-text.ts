/**
 * What an invoice PDF draws, read back as a reader copies it: standard-font strings decoded from
 * WinAnsi, embedded (Type0) fonts' glyph ids through their ToUnicode map; and the fonts each page uses.
 */
import assert from 'node:assert/strict';
import { decodePDFRawStream, PDFArray, PDFDict, PDFDocument, PDFName, PDFRawStream, type PDFObject, type PDFPage } from 'pdf-lib';

const WIN_ANSI_HIGH = '€\u0081‚ƒ„…†‡ˆ‰Š‹Œ\u008DŽ\u008F\u0090‘’“”•–—˜™š›œ\u009DžŸ';

const streamText = (stream: PDFObject | undefined): string => {
  assert.ok(stream instanceof PDFRawStream, 'a raw stream');
  return Buffer.from(decodePDFRawStream(stream).decode()).toString('latin1');
};

/** Glyph id (4 hex digits) → text, from a ToUnicode CMap's bfchar entries (pdf-lib writes only those). */
function toUnicode(cmap: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const [, id = '', hex = ''] of cmap.matchAll(/<([0-9a-f]{4})> <([0-9a-f]+)>/gi)) {
    map.set(id.toLowerCase(), Buffer.from(hex, 'hex').swap16().toString('utf16le'));
  }
  return map;
}

function fontsOf(doc: PDFDocument, page: PDFPage): Map<string, PDFDict> {
  const fonts = page.node.Resources()?.lookup(PDFName.of('Font'), PDFDict);
  const out = new Map<string, PDFDict>();
  for (const [key, ref] of fonts?.entries() ?? []) out.set(key.decodeText(), doc.context.lookup(ref, PDFDict));
  return out;
}

export interface DrawnPage {
  lines: string[];
  /** Each font's BaseFont, as the page's resources name it. */
  baseFonts: string[];
}

export async function drawn(bytes: Uint8Array): Promise<DrawnPage[]> {
  const doc = await PDFDocument.load(bytes);
  return doc.getPages().map((page) => {
    const fonts = fontsOf(doc, page);
    const maps = new Map<string, Map<string, string> | undefined>();
    for (const [key, dict] of fonts) {
      const cmap = dict.lookup(PDFName.of('ToUnicode'));
      maps.set(key, cmap === undefined ? undefined : toUnicode(streamText(cmap)));
    }
    const contents: PDFObject | undefined = page.node.Contents();
    const streams = contents instanceof PDFArray ? contents.asArray().map((ref) => doc.context.lookup(ref)) : [contents];
    const source = streams.map(streamText).join('\n');
    const lines: string[] = [];
    let map: Map<string, string> | undefined;
    for (const match of source.matchAll(/\/(\S+)\s+[\d.]+\s+Tf|<([0-9A-Fa-f]*)>\s*Tj/g)) {
      if (match[1] !== undefined) {
        map = maps.get(match[1]);
        continue;
      }
      const hex = match[2] ?? '';
      if (map === undefined) {
        lines.push([...Buffer.from(hex, 'hex')].map((byte) => (byte >= 0x80 && byte <= 0x9f ? WIN_ANSI_HIGH[byte - 0x80] : String.fromCharCode(byte))).join(''));
      } else {
        const glyphs = hex.toLowerCase().match(/.{4}/g) ?? [];
        lines.push(glyphs.map((id) => map?.get(id) ?? '\uFFFD').join(''));
      }
    }
    const baseFonts = [...fonts.values()].map((dict) => dict.lookup(PDFName.of('BaseFont'), PDFName).decodeText());
    return { lines, baseFonts };
  });
}
