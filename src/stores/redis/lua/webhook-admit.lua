-- Moves an account's (ARGV[1]) waiting entries from the parked set (KEYS[2]) into the outbox
-- stream (KEYS[1]), oldest first, while it has fewer than ARGV[2] there (KEYS[3], a hash); ARGV[4]
-- = '1' (a sweep: nobody admitted it for ARGV[3] ms, an instance died between a delivery's end and
-- this call, or an older version counted none) first forgets its count. Then it is noted in KEYS[4]
-- to be swept ARGV[3] ms on while any still waits. Returns how many were moved. Clock: Redis TIME.
local account = ARGV[1]
if ARGV[4] == '1' then redis.call('HDEL', KEYS[3], account) end
local moved = 0
while tonumber(redis.call('HGET', KEYS[3], account) or '0') < tonumber(ARGV[2]) do
  local head = redis.call('ZRANGEBYLEX', KEYS[2], '[' .. account .. '\0', '(' .. account .. '\1', 'LIMIT', 0, 1)[1]
  if not head then break end
  redis.call('ZREM', KEYS[2], head)
  local seqAt = #account + 2
  redis.call('XADD', KEYS[1], '*', 'e', string.sub(head, seqAt + 17), 's', tonumber(string.sub(head, seqAt, seqAt + 15)))
  redis.call('HINCRBY', KEYS[3], account, 1)
  moved = moved + 1
end
if #redis.call('ZRANGEBYLEX', KEYS[2], '[' .. account .. '\0', '(' .. account .. '\1', 'LIMIT', 0, 1) == 0 then
  redis.call('ZREM', KEYS[4], account)
else
  local now = redis.call('TIME')
  redis.call('ZADD', KEYS[4], tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000) + tonumber(ARGV[3]), account)
end
return moved
