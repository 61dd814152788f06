-- Forgets an attempt that never reached the backend, when the token still holds the record. A
-- record with a write-ahead mark is kept, its outcome unknown: an earlier attempt may have acted.
-- KEYS[1]: the record. ARGV: token. Returns 1 when released, else 0.

local record = redis.call('HMGET', KEYS[1], 'token', 'sentAt')
if record[1] ~= ARGV[1] then return 0 end
if record[2] then
  redis.call('HSET', KEYS[1], 'state', 'unknown', 'leaseUntil', 0)
  return 1
end
return redis.call('DEL', KEYS[1])
