-- The backend may have executed the request: keep the record, end the lease, so that the next
-- request with the key acquires it with reconcile = true. Only when the token still holds it.
-- KEYS[1]: the record. ARGV: token. Returns 1 when marked, else 0.

if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', 'unknown', 'leaseUntil', 0)
return 1
