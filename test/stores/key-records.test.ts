/** byCreation: the one listing order of every key store, the same whatever the process's locale. */
import assert from 'node:assert/strict';
import t from 'tap';
import { byCreation } from '../../src/stores/key-records.js';
import type { AccountRecord } from '../../src/stores/types.js';

const account = (id: string, createdAt: string): AccountRecord => ({ id, name: id, upstreamId: '1', createdAt });

t.test('byCreation: oldest first, then by id in code-unit order', async () => {
  const at = '2026-03-01T00:00:00.000Z';
  const listed = byCreation([account('b', at), account('a_b', at), account('A', at), account('a-b', at), account('z', '2026-02-28T23:59:59.999Z')]);
  // A locale's collation would put 'A' after 'a-b' or ignore the punctuation; code units do neither.
  assert.deepEqual(listed.map((record) => record.id), ['z', 'A', 'a-b', 'a_b', 'b']);
});
