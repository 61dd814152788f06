-- Adds or replaces one event's entry in an account's delivery log: KEYS[1] a hash (event id →
-- entry JSON), KEYS[2] a sorted set (event id by creation time in ms). ARGV[1]: event id,
-- ARGV[2]: entry JSON, ARGV[3]: creation time in ms, ARGV[4]: how many entries to keep. The
-- oldest beyond that are dropped from both, in the same step.
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('ZADD', KEYS[2], tonumber(ARGV[3]), ARGV[1])
local excess = redis.call('ZCARD', KEYS[2]) - tonumber(ARGV[4])
if excess > 0 then
  local oldest = redis.call('ZRANGE', KEYS[2], 0, excess - 1)
  redis.call('ZREM', KEYS[2], unpack(oldest))
  redis.call('HDEL', KEYS[1], unpack(oldest))
end
return 1
