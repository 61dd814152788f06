-- Enables an account's endpoint (KEYS[1], a hash) again and ends its run of failures. Nothing when
-- no URL is set (HSET would create a record without one). Returns the record after, or nil.
if redis.call('HEXISTS', KEYS[1], 'url') == 0 then return nil end
redis.call('HSET', KEYS[1], 'status', 'enabled')
redis.call('HDEL', KEYS[1], 'failingSince', 'disabledReason')
return redis.call('HGETALL', KEYS[1])
