-- Adds an entry (its event id ARGV[1], its account ARGV[3]) to the outbox and notes when it was
-- enqueued in the pending set (KEYS[2], score = ms), which the backlog reads: the stream alone
-- cannot say, a retry leaves it and comes back later. An event id still in the pending set waits
-- already (a change reported twice): nothing is added, {0, 0}.
-- The entry: ARGV[2] .. ARGV[7]. Numbered (ARGV[8] = '1'): ARGV[2] .. n .. ARGV[7], n being the
-- account's next number (KEYS[7], a hash: account → its last), taken here so that numbers follow
-- enqueue order whichever instance enqueues, and taken by an entry refused as full too (its
-- receiver sees the gap). An event numbered once keeps its number (KEYS[8], the event's own key,
-- kept ARGV[9] ms): queued again after its first copy was done (an enqueue retried after its reply
-- was lost, a change reported again), it is the same event, and a new number would be a gap that
-- no lost event explains. Answers {outcome, n} (n: 0 when not numbered).
-- Admission: while the account has fewer than ARGV[4] entries in the stream (KEYS[4], a hash:
-- account → their stream ids) and none waiting before it, the entry goes to the stream (KEYS[1]);
-- else it waits its turn in the parked set (KEYS[3], score 0, member "account \0 sequence \0
-- entry", so in order per account) and the account is noted in KEYS[5] (score: when to admit it
-- anyway, ARGV[5] ms on). So one account's backlog never stands in the stream before another
-- account's events. The ids are looked up, not counted: an instance of the previous release
-- finishes entries without a word here, and a count would keep the account held back.
-- An entry that would wait while the account has ARGV[6] parked already is refused ({2, n}):
-- nothing added. KEYS[6]: the line's sequence counter. Clock: Redis TIME.
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return {0, 0} end
local account = ARGV[3]
local number = 0
local entry = ARGV[2] .. ARGV[7]
if ARGV[8] == '1' then
  local kept = redis.call('GET', KEYS[8])
  if kept then number = tonumber(kept) else number = redis.call('HINCRBY', KEYS[7], account, 1) end
  redis.call('SET', KEYS[8], number, 'PX', ARGV[9])
  entry = ARGV[2] .. string.format('%d', number) .. ARGV[7]
end
local waiting = parkedHead(KEYS[3], account) ~= nil
local live = waiting and {} or liveIds(KEYS[1], KEYS[4], account)
local admitted = not waiting and #live < tonumber(ARGV[4])
if not admitted and parkedCount(KEYS[3], account) >= tonumber(ARGV[6]) then return {2, number} end
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local seq = redis.call('INCR', KEYS[6])
if admitted then
  live[#live + 1] = redis.call('XADD', KEYS[1], '*', 'e', entry, 's', seq)
  redis.call('HSET', KEYS[4], account, table.concat(live, ' '))
else
  redis.call('ZADD', KEYS[3], 0, parkedMember(account, seq, entry))
  redis.call('ZADD', KEYS[5], 'NX', nowMs + tonumber(ARGV[5]), account)
end
redis.call('ZADD', KEYS[2], nowMs, ARGV[1])
return {1, number}
