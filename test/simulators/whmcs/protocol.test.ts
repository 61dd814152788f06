/**
 * The simulator's JSON is PHP's `json_encode($value, 79)`, as WHMCS writes it: the JSON_HEX_* characters
 * and every control and non-ASCII UTF-16 unit escaped, slashes and DEL left as they are.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { encodePhpJson } from '../../../simulators/whmcs/protocol.js';

t.test('escapes what PHP escapes with flags 79, and nothing else', async () => {
  assert.equal(encodePhpJson('plain text 123 /path'), '"plain text 123 /path"');
  assert.equal(encodePhpJson(`<b>&'"\\`), '"\\u003Cb\\u003E\\u0026\\u0027\\u0022\\\\"');
  assert.equal(encodePhpJson('\b\f\n\r\t\u0000\u001f\u007f'), '"\\b\\f\\n\\r\\t\\u0000\\u001f\u007f"');
  assert.equal(encodePhpJson('é€😀\uffff'), '"\\u00e9\\u20ac\\ud83d\\ude00\\uffff"');
  assert.equal(encodePhpJson(''), '""');
  assert.equal(encodePhpJson({ 'k<': ['a&b', 1, null, true], n: undefined }), '{"k\\u003C":["a\\u0026b",1,null,true]}');
  // The same text twice in a row: the pattern's position is not carried from one string to the next.
  assert.equal(encodePhpJson(['x&', 'x&']), '["x\\u0026","x\\u0026"]');
});
