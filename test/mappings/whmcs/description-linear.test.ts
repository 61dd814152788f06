/**
 * A WHMCS product description is upstream text of any length (GetProducts, up to the 5 MB answer
 * cap), turned into plain text on the event loop every time the catalog is (re)mapped. Patterns
 * that backtrack quadratically there stall every tenant of the process: before the fix, 40 000
 * blanks with no line break took about 2 s, `<br` and 40 000 spaces about 10 s, and 1 MB of either
 * would take tens of minutes. Each input here is run in a child process with a generous deadline:
 * linear code finishes it in milliseconds, quadratic code would not finish within hours.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { htmlToText } from '../../../mappings/whmcs/text.js';

const TEXT_MODULE = fileURLToPath(new URL('../../../mappings/whmcs/text.ts', import.meta.url));
const SIZE = 1_000_000;
const DEADLINE_MS = 20_000;

/** Runs htmlToText on `expression`'s value in a child, so a stuck pattern cannot hang the test itself. */
function finishes(expression: string): { done: boolean; output: string } {
  const script = `import { htmlToText } from ${JSON.stringify(TEXT_MODULE)};
const n = ${SIZE};
process.stdout.write(String(htmlToText(${expression}).length));`;
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    timeout: DEADLINE_MS,
    // A busy child never runs a SIGTERM handler (tsx installs one): only SIGKILL ends it.
    killSignal: 'SIGKILL',
    encoding: 'utf8',
  });
  return { done: result.status === 0, output: `${result.stdout}${result.stderr}`.slice(0, 500) };
}

const HOSTILE: Array<[string, string]> = [
  ['a run of spaces with no line break', `' '.repeat(n) + 'x'`],
  ['tabs and spaces with no line break', `'\\t '.repeat(n / 2) + 'x'`],
  ['&nbsp; entities (decoded to spaces) with no line break', `'&nbsp;'.repeat(n / 6) + 'x'`],
  ['"<br" followed by spaces and no ">"', `'<br' + ' '.repeat(n)`],
  ['many unclosed comments', `'<!--'.repeat(n / 4)`],
];

t.test('a description of 1 MB is converted in linear time, whatever it holds', async (t) => {
  for (const [name, expression] of HOSTILE) {
    t.test(name, async () => {
      const { done, output } = finishes(expression);
      assert.ok(done, `htmlToText did not finish ${name} (${SIZE} characters) within ${DEADLINE_MS / 1000} s: a pattern backtracks super-linearly. ${output}`);
    });
  }
});

t.test('the conversion itself is unchanged', async () => {
  assert.equal(htmlToText('a  \t\nb'), 'a\nb');
  assert.equal(htmlToText('a   <br  />b<br>c< BR / >d<br/ >e'), 'a\nb\nc\nd\ne');
  assert.equal(htmlToText('x<br   y'), 'x<br   y');
  assert.equal(htmlToText('<p>One</p  ><!-- a <!-- b -->Two<!-- c --> end'), 'One\nTwo end');
  assert.equal(htmlToText('kept <!-- unclosed'), 'kept <!-- unclosed');
  assert.equal(htmlToText('<!-->x-->y'), 'y');
  assert.equal(htmlToText('&nbsp;&nbsp;\nnext'), 'next');
});
