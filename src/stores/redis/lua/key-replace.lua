-- Writes a key record (ARGV[2], JSON) under its id (ARGV[1]) in the keys hash (KEYS[1]), only if
-- the stored value is still the one the caller read (ARGV[3]): an operator's change must not undo
-- another's made in between. Returns 1 when written. (Accounts: account-write.lua, which keeps
-- their claims on upstream customers too.)
--
-- Compared as decoded JSON, not as text: a record stored in another key order or spacing (written
-- by hand, or by an older version) is still the one read, and the caller's retry loop would
-- otherwise never end.
local function same(a, b)
  if type(a) ~= 'table' or type(b) ~= 'table' then return a == b end
  for k, v in pairs(a) do
    if not same(v, b[k]) then return false end
  end
  for k in pairs(b) do
    if a[k] == nil then return false end
  end
  return true
end

local stored = redis.call('HGET', KEYS[1], ARGV[1])
if not stored or not same(cjson.decode(stored), cjson.decode(ARGV[3])) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
