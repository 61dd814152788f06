-- Puts one resource of an account's snapshot (KEYS[1], a hash; field ARGV[1]) back from ARGV[2] to
-- ARGV[3] (ARGV[4] = '0': the field removed), only if it still holds ARGV[2]: an observation whose
-- events were not queued is undone, unless a newer one came since. Returns 1 if put back, else 0.
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
if ARGV[4] == '1' then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
else
  redis.call('HDEL', KEYS[1], ARGV[1])
end
return 1
