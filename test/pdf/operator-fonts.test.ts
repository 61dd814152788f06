/**
 * The operator's fonts (config `pdf.fonts`) draw what the bundled DejaVu Sans lacks, in the render
 * threads; a file that is no usable font stops the boot with EX_CONFIG and says which and why.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import t from 'tap';
import { FontBook } from '../../src/pdf/fonts.js';
import { renderInvoicePdf } from '../../src/pdf/invoice-pdf.js';
import { InvoicePdfRenderer } from '../../src/pdf/render-pool.js';
import { invoiceWith, ISSUER } from './pdf-text.js';
import { drawn } from './drawn-text.js';

// A font with symbols DejaVu Sans lacks, standing in for an operator's Noto Sans CJK (none is bundled).
const DEJAVU = join(dirname(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/package.json')), 'ttf');
const MATH = join(DEJAVU, 'DejaVuMathTeXGyre.ttf');
const SYMBOLS = '⟂⎲';
const invoice = invoiceWith({ customer: { ...invoiceWith().customer, name: `Ada ${SYMBOLS}` } });

t.test('what the bundled font lacks is drawn with the operator font, bold falling back to its regular', async () => {
  const [bundled] = await drawn(await renderInvoicePdf(invoice, ISSUER));
  assert.ok(bundled?.lines.includes('Ada ??'), 'without it: the fallback');
  const [page] = await drawn(await renderInvoicePdf(invoice, ISSUER, 0, await FontBook.load([{ regular: MATH }])));
  assert.ok(page?.lines.includes(`Ada ${SYMBOLS}`), JSON.stringify(page?.lines.slice(8, 11)));
  assert.deepEqual([...new Set(page?.baseFonts.map((name) => name.slice(7)))], ['DejaVuMathTeXGyre-Regular']);
});

t.test('the render threads load the operator fonts', async (t) => {
  const pool = new InvoicePdfRenderer({ threads: 1, queue: 1, fonts: [{ regular: MATH }] });
  t.teardown(() => pool.close());
  await pool.checkFonts();
  const [page] = await drawn(await pool.render(invoice, ISSUER));
  assert.ok(page?.lines.includes(`Ada ${SYMBOLS}`));
});

t.test('checkFonts names a file that is missing or no font', async () => {
  const missing = new InvoicePdfRenderer({ threads: 1, queue: 1, fonts: [{ regular: '/nonexistent/NotoSansCJK.otf' }] });
  await assert.rejects(missing.checkFonts(), /cannot read font file \/nonexistent\/NotoSansCJK\.otf/);
  const notFont = new InvoicePdfRenderer({ threads: 1, queue: 1, fonts: [{ regular: join(DEJAVU, 'DejaVuSans.ttf'), bold: join(DEJAVU, '..', 'LICENSE') }] });
  await assert.rejects(notFont.checkFonts(), /font file \S+LICENSE is not a TrueType or OpenType font/);
});

t.test('a bad pdf.fonts stops the boot: exit 78 naming the field and the file, no stack trace', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rg-pdf-fonts-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'gateway.json'), JSON.stringify({ pdf: { fonts: [{ regular: join(dir, 'missing.ttf') }] } }));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SANDBOX: '1',
    CONFIG_FILE: join(dir, 'gateway.json'),
    PORT: '0',
    OPS_PORT: '0',
    KEYS_FILE: join(dir, 'keys.json'),
    AUDIT_LOG_FILE: join(dir, 'audit.log'),
    ADMIN_AUDIT_LOG_FILE: join(dir, 'admin-audit.log'),
    LOG_LEVEL: 'warn',
  };
  delete env.REDIS_URL;
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'bin/gateway.ts'], { env, encoding: 'utf8', timeout: 60_000 });
  assert.equal(result.status, 78, result.stderr);
  assert.match(result.stderr, /invalid configuration:\n {2}- pdf\.fonts: cannot read font file \S+missing\.ttf/);
  assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace');
});
