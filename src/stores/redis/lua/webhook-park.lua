-- Puts a claimed entry (ARGV[2], a stream id, group ARGV[1]) whose account (ARGV[4]) has its share
-- of deliveries in flight back in line: out of the outbox stream (KEYS[1]) and into the parked set
-- (KEYS[2]) at its own place (the stream entry's sequence), where it waits, unattempted and claimed
-- by nobody, until one of the account's deliveries ends (webhook-admit.lua). Only while the claim is
-- still consumer ARGV[3]'s. KEYS[3]: the accounts' stream ids; KEYS[4]: accounts with entries
-- parked, swept ARGV[5] ms on; KEYS[5]: the sequence counter. Clock: Redis TIME.
if #redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[2], ARGV[2], 1, ARGV[3]) == 0 then return 0 end
local fields = redis.call('XRANGE', KEYS[1], ARGV[2], ARGV[2])[1][2]
local entry, seq = nil, nil
for i = 1, #fields, 2 do
  if fields[i] == 'e' then entry = fields[i + 1] elseif fields[i] == 's' then seq = tonumber(fields[i + 1]) end
end
seq = seq or redis.call('INCR', KEYS[5])
local account = ARGV[4]
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], 0, parkedMember(account, seq, entry))
-- Its other entries still in the stream (one finished by a previous release's instance is not).
local live = liveIds(KEYS[1], KEYS[3], account)
if #live == 0 then
  -- None of the account's entries is left in the stream, so no delivery's end would admit it: the
  -- slot that refused it is one just ending (or a dead instance's). Its line's head goes back now.
  live[1] = admitMember(KEYS[1], KEYS[2], parkedHead(KEYS[2], account), account)
  redis.call('HSET', KEYS[3], account, live[1])
  if not parkedHead(KEYS[2], account) then
    redis.call('ZREM', KEYS[4], account)
    return 1
  end
else
  redis.call('HSET', KEYS[3], account, table.concat(live, ' '))
end
local now = redis.call('TIME')
redis.call('ZADD', KEYS[4], 'NX', tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) + tonumber(ARGV[5]), account)
return 1
