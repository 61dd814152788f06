-- Moves an account's (ARGV[1]) waiting entries from the parked set (KEYS[2]) into the outbox
-- stream (KEYS[1]), oldest first, while it has fewer than ARGV[2] there (KEYS[3], a hash: account
-- → their stream ids, those no longer in the stream dropped first: finished by an instance of the
-- previous release, or this call is a sweep after an instance died between a delivery's end and
-- it). Then the account is noted in KEYS[4] to be swept ARGV[3] ms on while any still waits.
-- Returns how many were moved. Clock: Redis TIME.
local account = ARGV[1]
local live = liveIds(KEYS[1], KEYS[3], account)
local moved = 0
while #live < tonumber(ARGV[2]) do
  local head = parkedHead(KEYS[2], account)
  if not head then break end
  live[#live + 1] = admitMember(KEYS[1], KEYS[2], head, account)
  moved = moved + 1
end
if #live == 0 then redis.call('HDEL', KEYS[3], account) else redis.call('HSET', KEYS[3], account, table.concat(live, ' ')) end
if not parkedHead(KEYS[2], account) then
  redis.call('ZREM', KEYS[4], account)
else
  local now = redis.call('TIME')
  redis.call('ZADD', KEYS[4], tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) + tonumber(ARGV[3]), account)
end
return moved
