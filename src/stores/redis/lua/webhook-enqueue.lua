-- Adds an entry (ARGV[2], its event id ARGV[1]) to the outbox stream (KEYS[1]) and notes when it
-- was enqueued in the pending set (KEYS[2], score = ms), which the backlog reads: the stream alone
-- cannot say, a retry leaves it and comes back later. An event id still in the pending set waits
-- already (a change reported twice): nothing is added, 0. Clock: Redis TIME.
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 0 end
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('XADD', KEYS[1], '*', 'e', ARGV[2])
redis.call('ZADD', KEYS[2], nowMs, ARGV[1])
return 1
