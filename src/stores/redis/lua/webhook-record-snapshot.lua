-- Sets one resource of an account's snapshot (KEYS[1], a hash; field ARGV[1]) to ARGV[4], only if
-- it still holds ARGV[2] (ARGV[3] = '0': only if the field is absent): an observer records what it
-- reported, unless another recorded a newer state meanwhile. ARGV[6] is the tag stored with it, in
-- the field 'tag:' .. ARGV[1] ('' stores none; a version before tags leaves that field alone and
-- reads past it). ARGV[5] = '0': removes the field and its tag instead (the resource was deleted
-- upstream). Returns 1 if set (or removed), else 0.
local current = redis.call('HGET', KEYS[1], ARGV[1])
if ARGV[3] == '1' then
  if current ~= ARGV[2] then return 0 end
elseif current then
  return 0
end
local tagField = 'tag:' .. ARGV[1]
if ARGV[5] == '0' then
  redis.call('HDEL', KEYS[1], ARGV[1], tagField)
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[4])
  if ARGV[6] == '' then
    redis.call('HDEL', KEYS[1], tagField)
  else
    redis.call('HSET', KEYS[1], tagField, ARGV[6])
  end
end
return 1
