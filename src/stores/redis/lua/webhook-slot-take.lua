-- Takes one of ARGV[2] delivery slots of an account (KEYS[1], a sorted set: holder → when its slot
-- runs out, ms) for holder ARGV[1], for ARGV[3] ms: 1, or 0 while every slot is held. Slots whose
-- time ran out (their instance died mid-delivery) are freed first. Clock: Redis TIME.
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) and redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], nowMs + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return 1
