/**
 * The production log destination (logger.ts, batchedStdout) gathers lines and hands them over in
 * batches: every line written must still reach standard output, in order, whether the process
 * ends by itself, calls process.exit, or keeps running (the one-second flush).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import t from 'tap';

function run(ending: string): string[] {
  const script = `
    import { pino } from 'pino';
    import { loggerOptions } from './src/logger.ts';
    const options = loggerOptions({ logLevel: 'info' });
    const log = pino({ level: 'info' }, options.stream);
    for (let n = 0; n < 25; n++) log.info({ n, text: 'é'.repeat(n * 20) }, 'line');
    ${ending}
  `;
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(result.status, 0, result.stderr);
  return result.stdout.split('\n').filter(Boolean);
}

function assertAll(lines: string[]): void {
  assert.deepEqual(lines.map((line) => JSON.parse(line).n), Array.from({ length: 25 }, (_, n) => n));
}

t.test('every line reaches stdout when the process ends by itself', async () => assertAll(run('')));
t.test('every line reaches stdout at process.exit', async () => assertAll(run('process.exit(0);')));
t.test('lines a running process wrote leave within the flush interval', async () => {
  const lines = run(`
    const { writeSync } = await import('node:fs');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // Written by hand, past the logger: if the batch had not left, it would come after this.
    writeSync(1, JSON.stringify({ n: 'marker' }) + '\\n');
    process.exit(0);
  `);
  assert.equal(JSON.parse(lines.at(-1) as string).n, 'marker', 'the batch left before the marker was written');
  assertAll(lines.slice(0, -1));
});
