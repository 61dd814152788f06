-- Moves an account's (ARGV[1]) waiting entries from the parked set (KEYS[2]) into the outbox
-- stream (KEYS[1]), oldest first, while it has fewer than ARGV[2] there (KEYS[3], a hash: account
-- → their stream ids, those no longer in the stream dropped first: finished by an instance of the
-- previous release, or this call is a sweep after an instance died between a delivery's end and
-- it). Then the account is noted in KEYS[4] to be swept ARGV[3] ms on while any still waits.
-- Returns how many were moved. Clock: Redis TIME.
local account = ARGV[1]
local live = {}
for id in string.gmatch(redis.call('HGET', KEYS[3], account) or '', '%S+') do
  if #redis.call('XRANGE', KEYS[1], id, id) > 0 then live[#live + 1] = id end
end
local moved = 0
while #live < tonumber(ARGV[2]) do
  local head = redis.call('ZRANGEBYLEX', KEYS[2], '[' .. account .. '\0', '(' .. account .. '\1', 'LIMIT', 0, 1)[1]
  if not head then break end
  redis.call('ZREM', KEYS[2], head)
  local seqAt = #account + 2
  live[#live + 1] = redis.call('XADD', KEYS[1], '*', 'e', string.sub(head, seqAt + 17), 's', tonumber(string.sub(head, seqAt, seqAt + 15)))
  moved = moved + 1
end
if #live == 0 then redis.call('HDEL', KEYS[3], account) else redis.call('HSET', KEYS[3], account, table.concat(live, ' ')) end
if #redis.call('ZRANGEBYLEX', KEYS[2], '[' .. account .. '\0', '(' .. account .. '\1', 'LIMIT', 0, 1) == 0 then
  redis.call('ZREM', KEYS[4], account)
else
  local now = redis.call('TIME')
  redis.call('ZADD', KEYS[4], tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) + tonumber(ARGV[3]), account)
end
return moved
