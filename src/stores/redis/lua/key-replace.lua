-- Writes a key record (ARGV[2], JSON) under its id (ARGV[1]) in the keys hash (KEYS[1]), only if
-- the stored value is still the one the caller read (ARGV[3]): an operator's change must not undo
-- another's made in between. Returns 1 when written. (Accounts: account-write.lua, which keeps
-- their claims on upstream customers too.)
-- Compared by `same` (same-record.lua, loaded in front).

local stored = redis.call('HGET', KEYS[1], ARGV[1])
if not stored or not same(cjson.decode(stored), cjson.decode(ARGV[3])) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
