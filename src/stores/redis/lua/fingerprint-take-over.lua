-- Replaces the fingerprint stored at KEYS[1] with ARGV[2] only while it is still ARGV[1] (a key
-- rotation: the previous key's fingerprint gives way to the current one's). Returns what is stored after.
local stored = redis.call('GET', KEYS[1])
if stored == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2])
  return ARGV[2]
end
return stored
