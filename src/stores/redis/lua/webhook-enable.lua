-- Enables an account's endpoint (KEYS[1], a hash) again and ends its run of failures; changes are
-- news to it from ARGV[1] (reportFrom). An enabled endpoint keeps its own time, if it has one (a
-- disabled one's may be left by a previous release, whose disable keeps it). Nothing when no URL is
-- set (HSET would create a record without one). Returns the record after, or nil.
if redis.call('HEXISTS', KEYS[1], 'url') == 0 then return nil end
if redis.call('HGET', KEYS[1], 'status') == 'disabled' then
  redis.call('HSET', KEYS[1], 'reportFrom', ARGV[1])
else
  redis.call('HSETNX', KEYS[1], 'reportFrom', ARGV[1])
end
redis.call('HSET', KEYS[1], 'status', 'enabled')
redis.call('HDEL', KEYS[1], 'failingSince', 'disabledReason')
return redis.call('HGETALL', KEYS[1])
