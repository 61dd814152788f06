-- Stores the definitive response, when the token still holds the record. The expiry set at
-- creation stays (HSET keeps a key's TTL).
-- KEYS[1]: the record. ARGV: token, status, headers_json, body. Returns 1 when stored, else 0.

if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', 'completed', 'leaseUntil', 0,
  'status', ARGV[2], 'headers', ARGV[3], 'body', ARGV[4])
return 1
