-- Disables an account's endpoint (KEYS[1], a hash) and records why (ARGV[1]), if it still has the
-- URL that answered (ARGV[2]). Nothing when no URL is set (HSET would create a record without one:
-- a clear that ran since the delivery began) or another one was set since. Its reportFrom goes: a
-- previous release's enable, which sets none, leaves the detector's baseline reporting nothing.
if redis.call('HGET', KEYS[1], 'url') ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'status', 'disabled', 'disabledReason', ARGV[1])
redis.call('HDEL', KEYS[1], 'reportFrom')
return 1
