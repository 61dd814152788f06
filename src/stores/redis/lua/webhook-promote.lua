-- Moves retries whose time has come from the schedule (KEYS[2], score = due time in ms) into the
-- outbox stream (KEYS[1]). ARGV[1]: at most this many. Clock: Redis TIME.
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', nowMs, 'LIMIT', 0, tonumber(ARGV[1]))
for _, entry in ipairs(due) do
  redis.call('XADD', KEYS[1], '*', 'e', entry)
  redis.call('ZREM', KEYS[2], entry)
end
return #due
