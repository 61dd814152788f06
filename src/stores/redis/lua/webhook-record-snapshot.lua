-- Sets one resource of an account's snapshot (KEYS[1], a hash; field ARGV[1]) to ARGV[4], only if
-- it still holds ARGV[2] (ARGV[3] = '0': only if the field is absent): an observer records what it
-- reported, unless another recorded a newer state meanwhile. ARGV[6] is the tag stored with it, in
-- the field 'tag:' .. ARGV[1] ('' stores none; a version before tags leaves that field alone and
-- reads past it). ARGV[7] = '1': the tag is stored after the server's clock (TIME, ms in base 36)
-- and a '.', so that every instance's records are stamped by one clock. ARGV[5] = '0': removes the
-- field and its tag instead (the resource was deleted upstream). Returns 1 if set (or removed), else 0.
local current = redis.call('HGET', KEYS[1], ARGV[1])
if ARGV[3] == '1' then
  if current ~= ARGV[2] then return 0 end
elseif current then
  return 0
end
local tagField = 'tag:' .. ARGV[1]
local tag = ARGV[6]
if ARGV[7] == '1' then
  local time = redis.call('TIME')
  local ms = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  local digits = ''
  repeat
    local digit = ms % 36
    digits = string.sub('0123456789abcdefghijklmnopqrstuvwxyz', digit + 1, digit + 1) .. digits
    ms = math.floor(ms / 36)
  until ms == 0
  tag = digits .. '.' .. tag
end
if ARGV[5] == '0' then
  redis.call('HDEL', KEYS[1], ARGV[1], tagField)
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[4])
  if tag == '' then
    redis.call('HDEL', KEYS[1], tagField)
  else
    redis.call('HSET', KEYS[1], tagField, tag)
  end
end
return 1
