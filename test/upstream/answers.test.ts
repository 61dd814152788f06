/**
 * Redaction of an upstream's words before they reach a log: every form in which an upstream (PHP, a
 * proxy's page) may echo a credential, and excerpts cut only after redaction.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { excerpt, redactor } from '../../src/upstream/answers.js';

// Characters that each encoding writes differently.
const SECRET = "Ab/c+d&e'f!g~h i*j(k)=\"l<m>";

t.test('redactor: every echo of a secret', async (t) => {
  const redact = redactor([SECRET, undefined, 'xy']);

  t.test('as sent, URL-encoded (JavaScript, PHP urlencode and rawurlencode, a form), HTML-escaped, in a JSON string', async () => {
    const forms = [
      SECRET,
      encodeURIComponent(SECRET),
      'Ab%2Fc%2Bd%26e%27f%21g%7Eh+i%2Aj%28k%29%3D%22l%3Cm%3E', // PHP urlencode
      'Ab%2Fc%2Bd%26e%27f%21g~h%20i%2Aj%28k%29%3D%22l%3Cm%3E', // PHP rawurlencode
      new URLSearchParams({ s: SECRET }).toString().slice(2),
      'Ab/c+d&amp;e&#039;f!g~h i*j(k)=&quot;l&lt;m&gt;', // htmlspecialchars, ENT_QUOTES
      'Ab/c+d&amp;e&#39;f!g~h i*j(k)=&quot;l&lt;m&gt;',
      JSON.stringify(SECRET).slice(1, -1),
      'Ab\\/c+d&e\'f!g~h i*j(k)=\\"l<m>', // PHP json_encode
    ];
    for (const form of forms) assert.equal(redact(`before ${form} after`), 'before [redacted] after', form);
  });

  t.test('text without a secret is left as it is; secrets under 3 characters are not redacted', async () => {
    assert.equal(redact('nothing xy here'), 'nothing xy here');
  });
});

t.test('excerpt', async (t) => {
  const redact = redactor(['s3cr3t-credential-0123456789']);

  t.test('a secret across the 200th character is redacted whole, not cut first', async () => {
    const body = Buffer.from(`${'a'.repeat(190)} s3cr3t-credential-0123456789 and more`);
    const shown = excerpt(body, redact);
    assert.doesNotMatch(shown, /s3cr3t/);
    assert.match(shown, /^"a{190} \[redac/);
  });

  t.test('no part of a secret that the read window cuts is shown, even after a run of whitespace', async () => {
    const body = Buffer.from(`x${' '.repeat(4096 - 11)}s3cr3t-credential-0123456789 tail`);
    assert.equal(excerpt(body, redact), '"x"');
  });

  t.test('JSON is never quoted, with or without a BOM or leading whitespace', async () => {
    assert.equal(excerpt(Buffer.from('\uFEFF  {"password":"x"}'), redact), '21 bytes of JSON-like text');
  });
});
