-- Forgets an attempt that never reached the backend, when the token still holds the record.
-- KEYS[1]: the record. ARGV: token. Returns 1 when deleted, else 0.

if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
return redis.call('DEL', KEYS[1])
