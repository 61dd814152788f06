/**
 * The fonts an invoice PDF is drawn with. An invoice whose text is all WinAnsi keeps the standard
 * Helvetica fonts (nothing embedded: a few KB, the bytes of earlier releases), and so does one of
 * which no other family draws more; any other is drawn with the first family that draws all of its
 * text (bundled DejaVu Sans, then the operator's `pdf.fonts` in order), or else the one that draws
 * most of it, embedded as a subset of the glyphs used. A render thread reads and parses the font files once, at its start (render-worker.ts).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fontkit from '@pdf-lib/fontkit';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import type { Fonts } from './canvas.js';

/** A family the operator adds (config `pdf.fonts`): TrueType or OpenType files; bold falls back to regular. */
export interface FontFiles {
  regular: string;
  bold?: string | undefined;
}

type Fontkit = Parameters<PDFDocument['registerFontkit']>[0];
type ParsedFont = ReturnType<Fontkit['create']>;

interface FontFile {
  bytes: Uint8Array;
  parsed: ParsedFont;
}

/** A family of embeddable fonts, and the characters it draws in both weights. */
interface Family {
  regular: FontFile;
  bold: FontFile;
  drawable: ReadonlySet<number>;
}

/** The fonts of a render thread, and the family an invoice is drawn with. */
export interface FontChoice {
  fonts: Fonts;
  /** What the text may hold: the rest falls back (PlainText in text.ts). */
  drawable: ReadonlySet<number>;
}

const BUNDLED: FontFiles = {
  regular: fileURLToPath(import.meta.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf')),
  bold: fileURLToPath(import.meta.resolve('dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf')),
};

/**
 * Right-to-left scripts are never drawn: pdf-lib neither reorders (bidi) nor joins letters, so an
 * Arabic or Hebrew name would print mirrored or broken, and digits beside it in the wrong order.
 * They keep the fallback ('?'), which at least shows that something is missing.
 */
const RIGHT_TO_LEFT = /[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}\p{Script=Samaritan}\p{Script=Mandaic}\p{Script=Adlam}\p{Script=Hanifi_Rohingya}]/u;

/** One read and parse per file. Throws with the file's path when it is unreadable or no single font. */
function loadFile(path: string): FontFile {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new Error(`cannot read font file ${path}: ${(error as Error).message}`);
  }
  let parsed: ParsedFont;
  try {
    parsed = fontkit.create(bytes) as unknown as ParsedFont;
  } catch (error) {
    throw new Error(`font file ${path} is not a TrueType or OpenType font: ${(error as Error).message}`);
  }
  // A collection (.ttc) parses as a set of fonts, without a character set: pdf-lib embeds one font.
  if (!Array.isArray(parsed.characterSet) || parsed.characterSet.length === 0) {
    throw new Error(`font file ${path} is a font collection or maps no characters: give one TrueType or OpenType font (.ttf, .otf)`);
  }
  return { bytes, parsed };
}

function family(files: FontFiles): Family {
  const regular = loadFile(files.regular);
  const bold = files.bold === undefined ? regular : loadFile(files.bold);
  const inBold = new Set(bold.parsed.characterSet);
  const drawable = new Set(regular.parsed.characterSet.filter((code) => inBold.has(code) && !RIGHT_TO_LEFT.test(String.fromCodePoint(code))));
  return { regular, bold, drawable };
}

export class FontBook {
  private readonly families: Family[];
  private readonly winAnsi: ReadonlySet<number>;
  /** pdf-lib parses a font at each embedding: this hands it the font this thread parsed once. */
  private readonly fontkit: Fontkit;
  /** Identifies the font files, so that a subset's tag changes with the font as with the text. */
  private readonly digest: string;

  private constructor(families: Family[], winAnsi: ReadonlySet<number>) {
    this.families = families;
    this.winAnsi = winAnsi;
    const parsed = new Map(families.flatMap((each) => [each.regular, each.bold]).map((file) => [file.bytes, file.parsed]));
    this.fontkit = { create: (bytes) => parsed.get(bytes) ?? (fontkit.create(bytes) as unknown as ParsedFont) };
    const hash = createHash('sha256');
    for (const file of parsed.keys()) hash.update(file);
    this.digest = hash.digest('hex');
  }

  /** The bundled family, then the operator's; throws (with the path) on a file that is no usable font. */
  static async load(extra: readonly FontFiles[] = []): Promise<FontBook> {
    const probe = await PDFDocument.create();
    const winAnsi = new Set((await probe.embedFont(StandardFonts.Helvetica)).getCharacterSet());
    return new FontBook([BUNDLED, ...extra].map(family), winAnsi);
  }

  /**
   * Embeds the fonts `text` (every string the invoice may draw) is best drawn with. `key` is what
   * makes the render: the subset's tag (`ABCDEF+DejaVuSans`) is derived from it, since pdf-lib's
   * own is random and the same invoice must give the same bytes.
   */
  async embed(doc: PDFDocument, text: readonly string[], key: string): Promise<FontChoice> {
    const used = new Set<number>();
    for (const each of text) for (const char of each.normalize('NFC')) used.add(char.codePointAt(0) as number);
    // Spaces, invisible characters and right-to-left scripts (never drawn) do not choose a family.
    for (const code of used) if (/[\p{Cc}\p{Cf}\p{Z}]/u.test(String.fromCodePoint(code)) || RIGHT_TO_LEFT.test(String.fromCodePoint(code))) used.delete(code);
    const best = this.choose(used);
    // Helvetica when no embedded family draws more of the text (a Chinese name without a CJK font).
    if (count(used, this.winAnsi) >= count(used, best.drawable)) {
      return {
        fonts: { regular: await doc.embedFont(StandardFonts.Helvetica), bold: await doc.embedFont(StandardFonts.HelveticaBold) },
        drawable: this.winAnsi,
      };
    }
    // fontkit keeps each glyph with the characters it was first asked for, and a subset asks for the
    // parts of composite glyphs with none (Cyrillic у is drawn from y): kept from an earlier render,
    // they would drop letters from this one's copyable text and make its bytes depend on the thread's past.
    for (const file of [best.regular, best.bold]) (file.parsed as unknown as { _glyphs: object })._glyphs = {};
    doc.registerFontkit(this.fontkit);
    const tag = [...createHash('sha256').update(this.digest).update(key).digest().subarray(0, 6)].map((byte) => String.fromCharCode(65 + (byte % 26))).join('');
    const embed = (file: FontFile) => doc.embedFont(file.bytes, { subset: true, customName: `${tag}+${file.parsed.postscriptName ?? 'Font'}` });
    const regular = await embed(best.regular);
    return { fonts: { regular, bold: best.bold === best.regular ? regular : await embed(best.bold) }, drawable: best.drawable };
  }

  /** The first family that draws every character, else the one that draws most (the earlier on a tie). */
  private choose(used: ReadonlySet<number>): Family {
    let best = this.families[0] as Family;
    let bestCount = -1;
    for (const each of this.families) {
      const drawn = count(used, each.drawable);
      if (drawn === used.size) return each;
      if (drawn > bestCount) [best, bestCount] = [each, drawn];
    }
    return best;
  }
}

function count(used: ReadonlySet<number>, drawable: ReadonlySet<number>): number {
  let drawn = 0;
  for (const code of used) if (drawable.has(code)) drawn += 1;
  return drawn;
}
