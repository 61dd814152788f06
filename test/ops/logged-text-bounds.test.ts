/**
 * The log's text bounds (src/logged-text.ts) at their edges: the cut's exact length, an address
 * that straddles the cut, a stack's line bound, an AggregateError's inner errors, and arrays of texts.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { loggedError, loggedText, loggedValue, MAX_LOGGED_TEXT } from '../../src/logged-text.js';

const EMAIL = 'jane.customer@example.com';

t.test('a text one character over the bound is cut and marked; one at the bound is whole', async () => {
  assert.equal(loggedText('a'.repeat(MAX_LOGGED_TEXT)), 'a'.repeat(MAX_LOGGED_TEXT));
  const over = loggedText('a'.repeat(MAX_LOGGED_TEXT + 1));
  assert.match(over, /… \[cut, 501 characters\]$/);
  assert.equal(over.indexOf('…'), MAX_LOGGED_TEXT);
});

t.test('an address straddling the cut leaves no part of it in the log', async () => {
  // The address starts 10 characters before the cut: masked first, then cut, so not even its local part stays.
  const text = `${'x '.repeat((MAX_LOGGED_TEXT - 10) / 2)}${EMAIL} and then some more words ${'y'.repeat(2_000)}`;
  const logged = loggedText(text);
  assert.doesNotMatch(logged, /jane/);
  assert.match(logged, /\[email\]/);
});

t.test('a stack keeps its first 40 lines, marked as cut', async () => {
  const error = new Error('deep');
  error.stack = ['Error: deep', ...Array.from({ length: 100 }, (_, index) => `    at frame${index} (file.js:1:1)`)].join('\n');
  const stack = (loggedError(error) as { stack: string }).stack;
  const lines = stack.split('\n');
  assert.equal(lines.length, 41, 'forty lines and the marker');
  assert.equal(lines[40], '    … [more lines cut]');
  assert.doesNotMatch(stack, /frame39 /);
});

t.test("an AggregateError's inner errors are bounded and masked as its own message is", async () => {
  const inner = new Error(`upstream said: ${EMAIL} ${'z'.repeat(100_000)}`);
  const logged = JSON.stringify(loggedError(new AggregateError([inner], 'every address failed')));
  assert.doesNotMatch(logged, /jane\.customer/);
  assert.ok(logged.length < 20_000, `${logged.length} characters`);
});

t.test('texts inside an array field are bounded and masked', async () => {
  const logged = JSON.stringify(loggedValue({ issues: [`${EMAIL} is already registered`, 'w'.repeat(100_000)] }));
  assert.doesNotMatch(logged, /jane\.customer/);
  assert.ok(logged.length < 2_000, `${logged.length} characters`);
});
