/**
 * The read-change-write loop under the key, account and webhook changes: a refused write is
 * decided again on what is stored now, and a store that refuses every write ends in an error.
 */
import t from 'tap';
import { MAX_UPDATE_ATTEMPTS, updateIfUnchanged } from '../../src/stores/update-if-unchanged.js';

/** A one-value store with a compare-and-set write; `interfere` lands another writer's value first. */
function cell(initial: number) {
  const state = { value: initial, writes: 0, interfere: [] as number[] };
  return {
    state,
    read: async () => state.value,
    write: async (next: number, expected: number) => {
      const landed = state.interfere.shift();
      if (landed !== undefined) state.value = landed;
      if (state.value !== expected) return false;
      state.value = next;
      state.writes++;
      return true;
    },
  };
}

t.test('a change is made on top of a write that landed in between, not over it', async (t) => {
  const c = cell(1);
  c.state.interfere.push(10, 20);
  const seen: number[] = [];
  const result = await updateIfUnchanged({
    read: c.read,
    change: (v) => {
      seen.push(v);
      return v + 1;
    },
    write: c.write,
  });
  t.same(seen, [1, 10, 20], 'each attempt reads what the last refusal left');
  t.same(result, { before: 20, after: 21 });
  t.equal(c.state.value, 21);
  t.equal(c.state.writes, 1);
});

t.test('a store that refuses every write ends in an error after the bound, not a loop', async (t) => {
  let reads = 0;
  await t.rejects(
    updateIfUnchanged({
      read: async () => ++reads,
      change: (v) => v,
      write: async () => false,
    }),
    /refused 64 conditional writes/,
  );
  t.equal(reads, MAX_UPDATE_ATTEMPTS);
});

t.test('an error from the read ends the update at once', async (t) => {
  let writes = 0;
  await t.rejects(
    updateIfUnchanged({
      read: async () => {
        throw new Error('unknown key');
      },
      change: (v: number) => v,
      write: async () => ++writes > 0,
    }),
    /unknown key/,
  );
  t.equal(writes, 0);
});
