-- Checks and consumes a request's rate limits (contract §4) in one atomic step; the rules and their
-- reports are in src/stores/rate-policies.ts, the memory twin in src/stores/memory/rate-limit-store.ts.
--
-- KEYS: the counters, each once (all in one slot: a cluster gets one group per call).
-- ARGV[1]: the groups, packed as doubles (ARGV[2] is its struct format): for each group its size and
--   its number of counters (its KEYS follow the previous group's), then per policy: kind, counter
--   (1 = the group's first key), slot (among the gcra/day policies sharing the counter), a, b:
--   1 gcra  interval_ms burst   one per interval sustained, burst more at once (slot: TAT)
--   2 day   limit       0       a counter per UTC day (slot: day * 2^36 + count)
--   3 log   limit       window  an exact rolling window: the admit times, oldest first
-- ARGV[3]: the struct format of the longest reply.
-- Groups are evaluated in order, each all-or-nothing; a refused group ends the evaluation.
--
-- A counter of gcra/day slots is [expires_at, slot 1, slot 2, ...]; a log is [rewritten_at, admit
-- times...], never more than limit + limit / 8 + 8 entries (at most `limit` inside the window). All
-- numbers are big-endian doubles (ms since the epoch on the server's clock, TIME, with the
-- microsecond fraction), read and written with struct. Cost per request: TIME, one MGET, then one
-- write per counter consumed: SET ... KEEPTTL, or APPEND of one entry to a log, with a TTL set again
-- only when the stored one would end too soon. A refused group writes nothing.
--
-- Reply (packed doubles): now, then per policy checked, in order: for gcra TAT - now, for day the
-- count before this request, for log the count in the window, newest - now and, when full, the
-- time (- now) of the entry whose departure makes room. The caller derives the rest.

local time = redis.call('TIME')
local now = time[1] * 1000 + time[2] / 1000
local values = redis.call('MGET', unpack(KEYS))
for k = 1, #values do
  -- Anything not of this layout (another version's data) counts as empty and is overwritten.
  local value = values[k]
  if value and (#value < 16 or #value % 8 ~= 0) then values[k] = false end
end
local sunpack, spack, floor, ceil = struct.unpack, struct.pack, math.floor, math.ceil
local spec = { sunpack(ARGV[2], ARGV[1]) }
local DAY_MS, DAY_SHIFT, EPSILON_MS = 86400000, 68719476736, 0.001
local today = floor(now / DAY_MS)
local midnight = (today + 1) * DAY_MS

local out = { now }
local o, at, last, base = 1, 1, #spec - 1, 0
local low = {} -- per log policy: the index of its first entry inside the window
local slots = {} -- per gcra/day counter: its slots, read once and written once
while at <= last do
  local size = spec[at]
  local allowed = true
  local first_out = o
  for i = 0, size - 1 do
    local q = at + 2 + i * 5
    local kind, k, slot, a, b = spec[q], base + spec[q + 1], spec[q + 2], spec[q + 3], spec[q + 4]
    local value = values[k]
    if kind == 3 then
      local n, count, newest, leaving = 0, 0, 0, 0
      local lo = 1
      if value then
        n = #value / 8 - 1
        local edge = now - b
        if n > 0 and sunpack('>d', value, 9) <= edge then
          -- Galloping from the oldest: usually only a few entries left since the last request.
          local hi, step = 2, 1
          while hi <= n and sunpack('>d', value, hi * 8 + 1) <= edge do
            lo, step = hi, step * 2
            hi = hi + step
          end
          if hi > n + 1 then hi = n + 1 end
          lo = lo + 1
          while lo < hi do
            local mid = floor((lo + hi) / 2)
            if sunpack('>d', value, mid * 8 + 1) > edge then hi = mid else lo = mid + 1 end
          end
        end
        count = n - lo + 1
        if count > 0 then newest = sunpack('>d', value, n * 8 + 1) - now end
        if count >= a then
          leaving = sunpack('>d', value, (lo + count - a) * 8 + 1) - now
          allowed = false
        end
      end
      low[q] = lo
      out[o + 1], out[o + 2], out[o + 3] = count, newest, leaving
      o = o + 3
    else
      local s = slots[k]
      if not s then
        s = {}
        slots[k] = s
        if value then s[0] = sunpack('>d', value) end
      end
      local stored = 0
      if value and #value >= slot * 8 + 16 then stored = sunpack('>d', value, slot * 8 + 9) end
      local level = 0
      if kind == 1 then
        if stored > now then level = stored - now end
        if level > b * a + EPSILON_MS then allowed = false end
      else
        local day = floor(stored / DAY_SHIFT)
        if day == today then level = stored - day * DAY_SHIFT end
        if level >= a then allowed = false end
      end
      s[slot + 1] = stored
      out[o + 1] = level
      o = o + 1
    end
  end

  if allowed then
    local r = first_out
    for i = 0, size - 1 do
      local q = at + 2 + i * 5
      local kind, k, slot, a, b = spec[q], base + spec[q + 1], spec[q + 2], spec[q + 3], spec[q + 4]
      if kind == 3 then
        local value, count, newest = values[k], out[r + 1], out[r + 2]
        r = r + 3
        -- Kept sorted even if the server's clock stepped back.
        local t = now
        if newest > 0 then t = now + newest end
        local lo = low[q]
        if count > 0 and now <= sunpack('>d', value) + b and lo <= 9 + a / 8 then
          -- The TTL set at the last rewrite (2 windows) still covers this entry's window.
          redis.call('APPEND', KEYS[k], spack('>d', t))
        elseif count > 0 then
          redis.call('SET', KEYS[k], spack('>d', now) .. string.sub(value, lo * 8 + 1) .. spack('>d', t), 'PX', ceil(2 * b))
        else
          redis.call('SET', KEYS[k], spack('>dd', now, t), 'PX', ceil(2 * b))
        end
      else
        local s, level = slots[k], out[r + 1]
        r = r + 1
        -- What the counter's TTL must cover (need), and how far to set it when it does not (upto).
        local need, upto
        if kind == 1 then
          need = now + level + a
          s[slot + 1], upto = need, need + a * (b + 1)
        else
          s[slot + 1] = today * DAY_SHIFT + level + 1
          need, upto = midnight, midnight
        end
        if not s.need or need > s.need then s.need = need end
        if not s.upto or upto > s.upto then s.upto = upto end
        -- Written once, after its last policy (a counter's policies are adjacent in a group).
        if i == size - 1 or base + spec[q + 6] ~= k then
          local expires = s[0] or 0
          local format = string.sub(ARGV[3], 1, #s + 2)
          if s.need <= expires then
            redis.call('SET', KEYS[k], spack(format, unpack(s, 0, #s)), 'KEEPTTL')
          else
            s[0] = s.upto
            redis.call('SET', KEYS[k], spack(format, unpack(s, 0, #s)), 'PX', ceil(s.upto - now))
          end
        end
      end
    end
  end
  base = base + spec[at + 1]
  at = at + 2 + size * 5
  if not allowed then break end
end
return spack(string.sub(ARGV[3], 1, o + 1), unpack(out, 1, o))
