-- Disables an account's endpoint (KEYS[1], a hash) and records why (ARGV[1]). Nothing when no URL
-- is set: HSET would create a record without one (a clear that ran since the delivery began).
if redis.call('HEXISTS', KEYS[1], 'url') == 0 then return 0 end
redis.call('HSET', KEYS[1], 'status', 'disabled', 'disabledReason', ARGV[1])
return 1
