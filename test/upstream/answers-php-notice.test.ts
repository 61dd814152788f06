/**
 * A WHMCS with PHP's display_errors on prints its notices and deprecation warnings (common after a
 * PHP upgrade) before the API's JSON. The answer is unreadable, and the operator's log line quoted
 * its first 200 characters: the warning, then the start of the JSON, which is a customer's data
 * (GetClientsDetails: name, email) or a service password. JSON is never quoted (answers.ts); the
 * text before it is, as it says what is wrong. Likewise an answer that is not text (UTF-16, a
 * content coding the gateway does not decode): quoted, its JSON and any echoed credential went to
 * the log with a NUL between each character, past the redaction.
 */
import assert from 'node:assert/strict';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { createWhmcsClient } from '../../mappings/whmcs/client.js';
import { API_PATH, CREDENTIALS, FakeWhmcs, ORIGIN, rejectsWith, testConfig } from '../mappings/whmcs/fake-whmcs.js';

const NOTICE = '<br />\n<b>Deprecated</b>:  Creation of dynamic property Foo::$bar is deprecated in <b>/home/acme/whmcs/vendor/x.php</b> on line <b>42</b><br />\n';
const EMAIL = 'jane.customer@example.org';
const DETAILS = JSON.stringify({ result: 'success', userid: 1, id: 1, firstname: 'Jane', lastname: 'Customer', email: EMAIL });

t.test('WHMCS: an unreadable answer is quoted to the operator without any of its JSON', async (t) => {
  const whmcs = new FakeWhmcs();
  t.teardown(() => whmcs.close());
  const client = createWhmcsClient(testConfig(), { dispatcher: whmcs.agent, logger: whmcs.logger });

  t.test('a PHP notice before the JSON: the notice is shown, the customer data is not', async () => {
    whmcs.answer('GetClientsDetails', `${NOTICE}${DETAILS}`, { times: 1 });
    const error = await rejectsWith(client.call('GetClientsDetails', { clientid: '1' }, { freshness: 'uncached' }), 'upstream_error');
    const message = error.operatorMessage ?? '';
    assert.match(message, /Deprecated/, message);
    for (const word of [EMAIL, 'Jane', 'firstname']) assert.ok(!message.includes(word), `the log line quotes "${word}": ${message}`);
  });

  t.test('a UTF-16 answer that echoes a credential: not quoted', async () => {
    const page = Buffer.from(`\uFEFF<p>identifier=${CREDENTIALS.identifier}</p>${DETAILS}`, 'utf16le');
    whmcs.agent.get(ORIGIN).intercept({ path: API_PATH, method: 'POST' }).reply(200, page, { headers: { 'content-type': 'application/json' } });
    const error = await rejectsWith(client.call('GetClientsDetails', { clientid: '1' }, { freshness: 'uncached' }), 'upstream_error');
    const message = (error.operatorMessage ?? '').replace(/\u0000/g, '');
    for (const word of [CREDENTIALS.identifier, EMAIL]) assert.ok(!message.includes(word), `the log line quotes "${word}": ${message}`);
  });

  t.test('a gzip-coded answer (the gateway decodes no coding): its size, not its bytes', async () => {
    whmcs.agent.get(ORIGIN).intercept({ path: API_PATH, method: 'POST' }).reply(200, gzipSync(DETAILS), { headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
    const error = await rejectsWith(client.call('GetClientsDetails', { clientid: '1' }, { freshness: 'uncached' }), 'upstream_error');
    assert.match(error.operatorMessage ?? '', /: \d+ bytes that are not UTF-8 text$/, error.operatorMessage);
  });
});
