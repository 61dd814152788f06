-- Sets one resource of an account's snapshot (KEYS[1], a hash; field ARGV[1]) to ARGV[4], only if
-- it still holds ARGV[2] (ARGV[3] = '0': only if the field is absent): an observer records what it
-- reported, unless another recorded a newer state meanwhile. ARGV[5] = '0': removes the field instead
-- (the resource was deleted upstream). Returns 1 if set (or removed), else 0.
local current = redis.call('HGET', KEYS[1], ARGV[1])
if ARGV[3] == '1' then
  if current ~= ARGV[2] then return 0 end
elseif current then
  return 0
end
if ARGV[5] == '0' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[4])
end
return 1
