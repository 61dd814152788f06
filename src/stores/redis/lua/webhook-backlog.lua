-- The outbox backlog: how many events wait in the pending set (KEYS[1], score = enqueue time in ms)
-- and how long ago the oldest was enqueued (0 when none waits). Clock: Redis TIME.
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local depth = redis.call('ZCARD', KEYS[1])
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if oldest[2] == nil then return { depth, 0 } end
return { depth, math.max(0, nowMs - tonumber(oldest[2])) }
