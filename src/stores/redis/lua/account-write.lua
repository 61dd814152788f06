-- Writes an account record (ARGV[2], JSON) under its id (ARGV[1]) in the accounts hash (KEYS[1]),
-- and its claim on its upstream customer in the index (KEYS[2]: upstream id → JSON array of the ids
-- of the accounts mapped to it). ARGV[2] = '': deletes the record instead, with its claim and every
-- key of it (KEYS[3] the keys hash, KEYS[4] the account's key-id set), and retires its id (KEYS[5]:
-- id → when): no account is created under it again, so that nothing kept under an account id (its
-- idempotency records, their replayed answers) reaches another tenant. Every key carries the {keys}
-- hash tag: one cluster slot, one script, so a record, its claim and its keys change together. Everything is decoded and checked before the record
-- is written: a refused or failed call has claimed nothing. An index entry is only a hint, confirmed against the
-- record it names, so an entry left by an older release's write (which kept no index) claims nothing.
--
-- ARGV[3]: the record the caller read ('' for none), compared as key-replace.lua does; a record
-- written since, or a creation under a retired id: 0, nothing written. ARGV[4] = '1': unconditional (putAccount: restores), neither
-- compared nor refused, the index kept all the same.
-- Returns 1 when written (a deletion: the ids of the keys deleted); 0 as above; or, when the record would move to a customer another account
-- holds, that account's id (nothing written). A write that keeps the customer is never refused:
-- accounts that shared one before it was refused go on working. `same`: same-record.lua, loaded in front.

local accounts, index, id, forced = KEYS[1], KEYS[2], ARGV[1], ARGV[4] == '1'
local deleting = ARGV[2] == ''

local function upstreamOf(json)
  local ok, record = pcall(cjson.decode, json)
  if ok and type(record) == 'table' and type(record.upstreamId) == 'string' then return record.upstreamId end
  return nil
end

-- The accounts the index names for `upstream` whose records still map there, but `id`.
local function holders(upstream)
  local listed = redis.call('HGET', index, upstream)
  local confirmed = {}
  local ok, ids = pcall(cjson.decode, listed or 'null')
  if not ok or type(ids) ~= 'table' then return confirmed end
  for _, holder in ipairs(ids) do
    local json = redis.call('HGET', accounts, holder)
    if holder ~= id and json and upstreamOf(json) == upstream then confirmed[#confirmed + 1] = holder end
  end
  return confirmed
end

local stored = redis.call('HGET', accounts, id)
if not forced then
  if ARGV[3] == '' then
    if stored or redis.call('HEXISTS', KEYS[5], id) == 1 then return 0 end
  elseif not stored or not same(cjson.decode(stored), cjson.decode(ARGV[3])) then
    return 0
  end
end
local before = stored and upstreamOf(stored)
local after = upstreamOf(deleting and stored or ARGV[2])
if not after then return redis.error_reply('account record without an upstreamId') end

-- The field '' (no upstream id is empty) holds how many accounts the index covers. Built from the
-- records at the first write since the index came, accounts that already share a customer all
-- listed; built again when the accounts hash holds another number: an account created by an
-- instance of an earlier release (a rolling deploy), which keeps no index, would stay out of it.
if tonumber(redis.call('HGET', index, '') or '-1') ~= redis.call('HLEN', accounts) then
  redis.call('DEL', index)
  local built = {}
  local all = redis.call('HGETALL', accounts)
  for i = 1, #all, 2 do
    local upstream = upstreamOf(all[i + 1])
    if upstream then
      built[upstream] = built[upstream] or {}
      table.insert(built[upstream], all[i])
    end
  end
  for upstream, ids in pairs(built) do redis.call('HSET', index, upstream, cjson.encode(ids)) end
  redis.call('HSET', index, '', redis.call('HLEN', accounts))
end

-- Deletes the keys of account `id`; their ids.
local function dropKeys()
  local gone = {}
  for _, keyId in ipairs(redis.call('SMEMBERS', KEYS[4])) do
    local ok, key = pcall(cjson.decode, redis.call('HGET', KEYS[3], keyId) or 'null')
    if ok and type(key) == 'table' and key.accountId == id then
      redis.call('HDEL', KEYS[3], keyId)
      gone[#gone + 1] = keyId
    end
  end
  redis.call('DEL', KEYS[4])
  return gone
end

if deleting then
  redis.call('HDEL', accounts, id)
  redis.call('HSET', KEYS[5], id, redis.call('TIME')[1])
  local rest = holders(before)
  if #rest == 0 then redis.call('HDEL', index, before) else redis.call('HSET', index, before, cjson.encode(rest)) end
  redis.call('HSET', index, '', redis.call('HLEN', accounts))
  return dropKeys()
end

local others = holders(after)
if not forced and before ~= after and #others > 0 then return others[1] end
redis.call('HSET', accounts, id, ARGV[2])
if before and before ~= after then
  local rest = holders(before)
  if #rest == 0 then redis.call('HDEL', index, before) else redis.call('HSET', index, before, cjson.encode(rest)) end
end
table.insert(others, id)
redis.call('HSET', index, after, cjson.encode(others))
redis.call('HSET', index, '', redis.call('HLEN', accounts))
return 1
