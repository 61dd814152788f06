-- Writes a record (ARGV[2], JSON) under its id (ARGV[1]) in a hash of accounts or keys (KEYS[1]),
-- only if the stored value is still the one the caller read (ARGV[3]; '' for none): an operator's
-- change must not undo another's made in between. Returns 1 when written.
if (redis.call('HGET', KEYS[1], ARGV[1]) or '') ~= ARGV[3] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
