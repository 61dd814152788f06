-- An account's line in the webhook outbox, shared by webhook-enqueue.lua, webhook-admit.lua and
-- webhook-park.lua (loaded in front of them: LuaScript.load's `shared`). The parked set holds
-- members "account \0 sequence (16 digits) \0 entry", so ordered per account by sequence; the
-- in-stream hash holds, per account, the ids of its entries in the stream, space-separated.

local function parkedMember(account, seq, entry)
  return account .. '\0' .. string.format('%016d', seq) .. '\0' .. entry
end

-- The account's first parked member, or nil.
local function parkedHead(parked, account)
  return redis.call('ZRANGEBYLEX', parked, '[' .. account .. '\0', '(' .. account .. '\1', 'LIMIT', 0, 1)[1]
end

-- How many of the account's members are parked.
local function parkedCount(parked, account)
  return redis.call('ZLEXCOUNT', parked, '[' .. account .. '\0', '(' .. account .. '\1')
end

-- The account's ids still in the stream: one an instance of the previous release finished is not.
local function liveIds(stream, inStream, account)
  local live = {}
  for id in string.gmatch(redis.call('HGET', inStream, account) or '', '%S+') do
    if #redis.call('XRANGE', stream, id, id) > 0 then live[#live + 1] = id end
  end
  return live
end

-- Moves a parked member into the stream, with its sequence; answers its stream id.
local function admitMember(stream, parked, member, account)
  redis.call('ZREM', parked, member)
  local seqAt = #account + 2
  return redis.call('XADD', stream, '*', 'e', string.sub(member, seqAt + 17), 's', tonumber(string.sub(member, seqAt, seqAt + 15)))
end
