-- Writes an endpoint's secrets sealed anew (ARGV[3], and ARGV[4] for the previous one; '' for none)
-- over the record KEYS[1] only while its sealed secrets are still the ones the caller read (ARGV[1],
-- ARGV[2]; '' for none); nothing else in the record changes. Returns 1 when written.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('HGET', KEYS[1], 'secret') ~= ARGV[1] or (redis.call('HGET', KEYS[1], 'previousSecret') or '') ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], 'secret', ARGV[3])
if ARGV[4] == '' then redis.call('HDEL', KEYS[1], 'previousSecret') else redis.call('HSET', KEYS[1], 'previousSecret', ARGV[4]) end
return 1
