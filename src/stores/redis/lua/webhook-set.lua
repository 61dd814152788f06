-- Replaces an account's endpoint record (KEYS[1], a hash) with the fields ARGV[2..] (name, value,
-- …), only if its secret is still the sealed one the caller read (ARGV[1]; '' for no record): two
-- PUTs at once must not both hand out a new secret while only one is kept. Returns 1 when written.
if (redis.call('HGET', KEYS[1], 'secret') or '') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
return 1
