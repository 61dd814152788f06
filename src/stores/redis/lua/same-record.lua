-- Shared by the scripts that write a record only if it is still the one the caller read
-- (key-replace.lua, account-write.lua): loaded in front of them (LuaScript.load's `shared`).
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
