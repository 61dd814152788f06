-- A key and its account in one round trip (authentication reads both). Mirrors
-- src/stores/key-records.ts keyWithAccount.
--
-- KEYS[1]: the keys hash (key id → JSON record); KEYS[2]: the accounts hash (account id → JSON)
-- ARGV[1]: the key id
-- Returns { key_json, account_json or '' }, or false when the key is unknown.

local key = redis.call('HGET', KEYS[1], ARGV[1])
if not key then return false end
local ok, record = pcall(cjson.decode, key)
local account = false
if ok and type(record) == 'table' and type(record.accountId) == 'string' then
  account = redis.call('HGET', KEYS[2], record.accountId)
end
return { key, account or '' }
