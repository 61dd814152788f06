import assert from 'node:assert/strict';
import t from 'tap';
import { WhmcsConfigSchema } from '../../../mappings/whmcs/config.js';
import { encodePhpArray, phpSerializeArray } from '../../../mappings/whmcs/php-serialize.js';
import { decodeEntities, displayName, htmlToText } from '../../../mappings/whmcs/text.js';
import { localDate, localToUtc } from '../../../src/backend/time-zone.js';
import { parseLocalDateTime } from '../../../mappings/whmcs/time.js';

t.test('PHP serialize for configoptions/customfields', async (t) => {
  t.test('serializes {5: 12, 7: 3} exactly as WHMCS unserializes it, then base64', async () => {
    assert.equal(phpSerializeArray([[5, 12], [7, 3]]), 'a:2:{i:5;i:12;i:7;i:3;}');
    assert.equal(encodePhpArray([[5, 12], [7, 3]]), Buffer.from('a:2:{i:5;i:12;i:7;i:3;}').toString('base64'));
    assert.equal(encodePhpArray([[5, 12], [7, 3]]), 'YToyOntpOjU7aToxMjtpOjc7aTozO30=');
  });

  t.test('gives strings their UTF-8 byte length', async () => {
    assert.equal(phpSerializeArray([[7, 'abc']]), 'a:1:{i:7;s:3:"abc";}');
    assert.equal(phpSerializeArray([[1, 'Grüße €']]), 'a:1:{i:1;s:11:"Grüße €";}');
    assert.equal(Buffer.from(encodePhpArray([[1, 'Grüße €']]), 'base64').toString('utf8'), 'a:1:{i:1;s:11:"Grüße €";}');
  });

  t.test('serializes an empty array and refuses non-integers', async () => {
    assert.equal(phpSerializeArray([]), 'a:0:{}');
    assert.throws(() => phpSerializeArray([[1, 1.5]]), RangeError);
  });
});

t.test('text from WHMCS', async (t) => {
  t.test('decodes entities once, never twice', async () => {
    assert.equal(decodeEntities('A &amp; B &#039;x&#039; &quot;q&quot; &lt;b&gt; &#x20AC; &#8364;'), `A & B 'x' "q" <b> € €`);
    assert.equal(decodeEntities('&amp;lt;'), '&lt;');
    assert.equal(decodeEntities('&unknown; &#0; & alone'), '&unknown; &#0; & alone');
  });

  t.test('turns an HTML description into plain text', async () => {
    assert.equal(htmlToText('2 vCPU\r\n4 GB RAM'), '2 vCPU\n4 GB RAM');
    assert.equal(htmlToText('<p>Fast <b>SSD</b></p><ul><li>One</li><li>Two</li></ul><!-- x -->'), 'Fast SSD\nOne\nTwo');
    assert.equal(htmlToText('&lt;p&gt;Encoded &amp;amp; kept&lt;/p&gt;'), 'Encoded &amp; kept');
    assert.equal(htmlToText('RAM <= 4 GB'), 'RAM <= 4 GB');
  });

  t.test('shows the display part of "internal|Display" names', async () => {
    assert.equal(displayName('os|Operating System'), 'Operating System');
    assert.equal(displayName('Plain'), 'Plain');
  });
});

t.test('WHMCS local times', async (t) => {
  t.test('converts the server clock to RFC 3339 UTC in the configured zone', async () => {
    const local = parseLocalDateTime('2020-09-23 13:59:35');
    assert.ok(local);
    assert.equal(localToUtc(local, 'UTC'), '2020-09-23T13:59:35Z');
    assert.equal(localToUtc(local, 'Europe/Berlin'), '2020-09-23T11:59:35Z');
    assert.equal(localToUtc(local, 'America/New_York'), '2020-09-23T17:59:35Z');
    const winter = parseLocalDateTime('2024-01-15 00:30:00');
    assert.ok(winter);
    assert.equal(localToUtc(winter, 'Europe/Berlin'), '2024-01-14T23:30:00Z');
  });

  t.test('refuses what is not a real calendar time', async () => {
    assert.equal(parseLocalDateTime('2024-02-30'), null);
    assert.equal(parseLocalDateTime('2024-01-01 24:00:00'), null);
    assert.equal(parseLocalDateTime('yesterday'), null);
  });

  t.test('on a UTC clock, gives the time as Date writes it, every day from 1970 to 2100', async () => {
    let second = 0;
    for (let day = Date.UTC(1970, 0, 1); day < Date.UTC(2101, 0, 1); day += 86_400_000) {
      second = (second + 7_919) % 86_400;
      const at = day + second * 1000;
      const local = parseLocalDateTime(new Date(at).toISOString().slice(0, 19).replace('T', ' '));
      assert.ok(local);
      const expected = new Date(at).toISOString().replace('.000Z', 'Z');
      assert.equal(localToUtc(local, 'UTC'), expected);
      assert.equal(localToUtc(local, 'Etc/UTC'), expected);
    }
  });

  t.test('gives the date part as the text had it, every day from 1970 to 2100', async () => {
    for (let day = Date.UTC(1970, 0, 1); day < Date.UTC(2101, 0, 1); day += 86_400_000) {
      const text = new Date(day).toISOString().slice(0, 10);
      const local = parseLocalDateTime(`${text} 23:59:59`);
      assert.ok(local);
      assert.equal(localDate(local), text);
    }
  });
});

t.test('WHMCS config', async (t) => {
  const minimal = { url: 'https://billing.example.com', identifier: 'id', secret: 'secret' };

  t.test('fills the defaults', async () => {
    const config = WhmcsConfigSchema.parse(minimal);
    assert.equal(config.timeoutMs, 15_000);
    assert.equal(config.actionTimeoutsMs.ModuleCustom, 90_000);
    assert.equal(config.connections, 16);
    assert.equal(config.paymentMethod, 'banktransfer');
    assert.deepEqual(config.acceptOrder, { enabled: false, autoSetup: true, sendEmail: false });
    assert.deepEqual(config.orderKeyField, { name: 'Gateway Idempotency Key', ids: {} });
    assert.deepEqual(config.moduleFunctions.solusvmpro, { start: 'boot', stop: 'shutdown', reboot: 'reboot' });
    assert.equal(config.cancelRevokeAction, 'GatewayDeleteCancelRequest');
    assert.equal(config.timeZone, 'UTC');
    assert.equal(config.trackCancellations, true);
  });

  t.test('adds action timeouts to the defaults rather than replacing them', async () => {
    const config = WhmcsConfigSchema.parse({ ...minimal, actionTimeoutsMs: { GetProducts: 5_000 } });
    assert.equal(config.actionTimeoutsMs.GetProducts, 5_000);
    assert.equal(config.actionTimeoutsMs.ModuleTerminate, 90_000);
  });

  t.test('refuses typos, bad zones, bad function names and non-http URLs', async () => {
    assert.equal(WhmcsConfigSchema.safeParse({ ...minimal, timeout: 5 }).success, false);
    assert.equal(WhmcsConfigSchema.safeParse({ ...minimal, timeZone: 'Mars/Base' }).success, false);
    assert.equal(WhmcsConfigSchema.safeParse({ ...minimal, moduleFunctions: { x: { start: 'a;b' } } }).success, false);
    assert.equal(WhmcsConfigSchema.safeParse({ ...minimal, url: 'ftp://billing.example.com' }).success, false);
  });
});
