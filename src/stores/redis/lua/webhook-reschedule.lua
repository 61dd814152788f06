-- Takes a claimed entry (ARGV[2], a stream id) out of the outbox stream (KEYS[1], group ARGV[1])
-- and schedules ARGV[3] (the entry, with one more attempt) in KEYS[2] after ARGV[4] ms, all at
-- once, so that a crash cannot lose it or leave it in both places. Only while the claim is still
-- consumer ARGV[5]'s: one taken over (the consumer stalled past the idle time) is the new
-- claimer's to finish. While it waits, its account
-- (ARGV[6]) has one entry fewer in the stream (KEYS[3], its stream ids): a retry does not hold up the account's
-- next events (they may overtake it). Clock: Redis TIME.
if #redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[2], ARGV[2], 1, ARGV[5]) == 0 then return 0 end
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], nowMs + tonumber(ARGV[4]), ARGV[3])
local kept = {}
for id in string.gmatch(redis.call('HGET', KEYS[3], ARGV[6]) or '', '%S+') do
  if id ~= ARGV[2] then kept[#kept + 1] = id end
end
if #kept == 0 then redis.call('HDEL', KEYS[3], ARGV[6]) else redis.call('HSET', KEYS[3], ARGV[6], table.concat(kept, ' ')) end
return 1
