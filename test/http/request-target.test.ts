/**
 * A request target in absolute form (RFC 9112 §3.2.2) is served as its origin form: one text for one
 * request wherever the target is read after routing.
 */
import assert from 'node:assert/strict';
import t from 'tap';
import { originForm } from '../../src/app.js';

t.test('originForm', async () => {
  assert.equal(originForm('/v1/me'), '/v1/me');
  assert.equal(originForm('/v1/services?page=2'), '/v1/services?page=2');
  assert.equal(originForm('http://gateway.example/v1/services?page=2'), '/v1/services?page=2');
  assert.equal(originForm('https://gateway.example:8443/v1/services/7'), '/v1/services/7');
  assert.equal(originForm('http://gateway.example'), '/', 'no path: the root');
  assert.equal(originForm('http://gateway.example/v1/../admin/v1/accounts'), '/admin/v1/accounts', 'dot segments resolved, as the router would not: a path like any other');
  assert.equal(originForm('*'), '*', 'the asterisk form (OPTIONS) is left to the router');
  assert.equal(originForm('ftp://gateway.example/v1/me'), 'ftp://gateway.example/v1/me', 'only http(s) URLs are absolute targets');
  assert.equal(originForm(undefined), '/');
});
