-- Disables an account's endpoint (KEYS[1], a hash) and records why (ARGV[1]), if it still has the
-- URL that answered (ARGV[2]). Nothing when no URL is set (HSET would create a record without one:
-- a clear that ran since the delivery began) or another one was set since.
if redis.call('HGET', KEYS[1], 'url') ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'status', 'disabled', 'disabledReason', ARGV[1])
return 1
