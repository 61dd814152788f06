-- Done with a claimed entry (ARGV[2], a stream id, group ARGV[1]), only while the claim is still
-- consumer ARGV[3]'s: out of the outbox stream (KEYS[1]) and the pending set (KEYS[2], member
-- ARGV[4], the event id); given up (ARGV[5] = 'failed'): its event id at the head of KEYS[3],
-- which keeps ARGV[6] ids at most. Its stream id leaves its account's (ARGV[7]) in KEYS[4].
if #redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[2], ARGV[2], 1, ARGV[3]) == 0 then return 0 end
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[4])
local kept = {}
for id in string.gmatch(redis.call('HGET', KEYS[4], ARGV[7]) or '', '%S+') do
  if id ~= ARGV[2] then kept[#kept + 1] = id end
end
if #kept == 0 then redis.call('HDEL', KEYS[4], ARGV[7]) else redis.call('HSET', KEYS[4], ARGV[7], table.concat(kept, ' ')) end
if ARGV[5] == 'failed' then
  redis.call('LPUSH', KEYS[3], ARGV[4])
  redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[6]) - 1)
end
return 1
