-- Moves retries whose time has come from the schedule (KEYS[2], score = due time in ms) into the
-- outbox stream (KEYS[1]), each noted for its account (KEYS[3], its stream ids) and numbered (KEYS[4], its place
-- should it be parked). ARGV[1]: at most this many. Returns the accounts whose parked entries
-- nobody admitted in time (KEYS[5], score = when to sweep), at most ARGV[1]. Clock: Redis TIME.
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', nowMs, 'LIMIT', 0, tonumber(ARGV[1]))
for _, entry in ipairs(due) do
  local id = redis.call('XADD', KEYS[1], '*', 'e', entry, 's', redis.call('INCR', KEYS[4]))
  redis.call('ZREM', KEYS[2], entry)
  local account = cjson.decode(entry).accountId
  local ids = redis.call('HGET', KEYS[3], account)
  redis.call('HSET', KEYS[3], account, ids and (ids .. ' ' .. id) or id)
end
return redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', nowMs, 'LIMIT', 0, tonumber(ARGV[1]))
