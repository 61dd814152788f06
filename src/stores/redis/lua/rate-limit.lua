-- Checks and consumes a request's rate limits (contract §4) in one atomic step; the rules and their
-- reports are in src/stores/rate-policies.ts, the memory twin in src/stores/memory/rate-limit-store.ts.
--
-- KEYS: the counters, each once (all in one slot: a cluster gets one group per call).
-- ARGV[1]: the groups, packed as doubles (ARGV[2] is its struct format): for each group its size and
--   its number of counters (its KEYS follow the previous group's), then per policy three numbers:
--   kind + 4 × counter (1 = the group's first key), a, b:
--   1 gcra  interval_ms burst   one per interval sustained, burst more at once (slot: TAT)
--   2 day   limit       0       a counter per UTC day (slot: day * 2^36 + count)
--   3 log   limit       window  an exact rolling window: the admit times, oldest first
--   The gcra/day policies of one counter are adjacent; their slots follow in that order.
-- ARGV[3]: `>` and at least as many `d` as the longest reply or counter value (formats are cut from it).
-- Groups are evaluated in order, each all-or-nothing; a refused group ends the evaluation.
--
-- A counter of gcra/day slots is [expires_at, slot 1, slot 2, ...], big-endian doubles. A log is a
-- 13-byte header, [version (byte) 2, origin (double, ms since the epoch), written (uint32, ms after
-- origin: when it was last rewritten)], then the admit times, oldest first, each a uint32 of ms after
-- origin: 4 bytes an entry, half a double, since reading a value into Lua costs by its size. Never
-- more than limit + limit / 8 + 8 entries (at most `limit` inside the window). Times are whole ms on
-- the server's clock (TIME, rounded up), so an offset is exact. Cost per request: TIME, one MGET,
-- then one write per counter consumed: SET ... KEEPTTL, or APPEND of one entry to a log, with a TTL
-- set again only when the stored one would end too soon. A refused group writes nothing. No table
-- is built but the spec, the reply and one per gcra/day counter: each costs, every call.
--
-- Reply (packed doubles): now, then per policy checked, in order: for gcra TAT - now, for day the
-- count before this request, for log the count in the window, newest - now and, when full, the
-- time (- now) of the entry whose departure makes room. The caller derives the rest.

local sunpack, spack, sub, floor, ceil = struct.unpack, struct.pack, string.sub, math.floor, math.ceil
local time = redis.call('TIME')
local now = time[1] * 1000 + ceil(time[2] / 1000)
local values = redis.call('MGET', unpack(KEYS))
local formats = ARGV[3]
local spec = { sunpack(ARGV[2], ARGV[1]) }
-- A log's origin moves (its entries rewritten) once this old: offsets stay far below 2^32.
local LOG_VERSION, REBASE_MS = 2, 2147483648
local DAY_MS, DAY_SHIFT, EPSILON_MS = 86400000, 68719476736, 0.001
local today = floor(now / DAY_MS)
local midnight = (today + 1) * DAY_MS

-- Sized at once: growing a table element by element reallocates it at every power of two.
local out = { now, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }
local o, at, last, base = 1, 1, #spec - 1, 0
local fixed = {} -- per gcra/day counter: its doubles (expires_at, then the slots), read once
while at <= last do
  local size = spec[at]
  local stop = at + size * 3 - 1 -- where its last policy starts
  local allowed = true
  local first_out = o
  local slot, previous = 0, 0
  for q = at + 2, stop, 3 do
    local code, a, b = spec[q], spec[q + 1], spec[q + 2]
    local kind = code % 4
    local k = base + (code - kind) / 4
    local value = values[k]
    if kind == 3 then
      local count, newest, leaving = 0, 0, 0
      -- Anything not of this layout (another version's data) counts as empty and is overwritten.
      if value and #value > 16 and #value % 4 == 1 then
        local version, origin, _, oldest = sunpack('>BdI4I4', value)
        if version == LOG_VERSION then
          local n = (#value - 13) / 4
          -- Entry i (at byte 10 + 4 i) counts while its offset is above edge.
          local edge = now - b - origin
          local lo = 1
          if oldest <= edge then
            -- Galloping from the oldest: usually only a few entries left since the last request.
            local hi, step = 2, 1
            while hi <= n and sunpack('>I4', value, 10 + 4 * hi) <= edge do
              lo, step = hi, step * 2
              hi = hi + step
            end
            if hi > n + 1 then hi = n + 1 end
            lo = lo + 1
            while lo < hi do
              local mid = floor((lo + hi) / 2)
              if sunpack('>I4', value, 10 + 4 * mid) > edge then hi = mid else lo = mid + 1 end
            end
          end
          count = n - lo + 1
          if count > 0 then newest = origin + sunpack('>I4', value, 10 + 4 * n) - now end
          if count >= a then
            leaving = origin + sunpack('>I4', value, 10 + 4 * (lo + count - a)) - now
            allowed = false
          end
        end
      end
      out[o + 1], out[o + 2], out[o + 3] = count, newest, leaving
      o = o + 3
    else
      if k == previous then slot = slot + 1 else slot, previous = 0, k end
      local doubles = fixed[k]
      if not doubles then
        -- Anything not of this layout (another version's data) counts as empty and is overwritten.
        if value and #value >= 16 and #value % 8 == 0 then doubles = { sunpack(sub(formats, 1, #value / 8 + 1), value) } else doubles = { 0 } end
        fixed[k] = doubles
      end
      local stored = doubles[slot + 2] or 0
      local level = 0
      if kind == 1 then
        if stored > now then level = stored - now end
        if level > b * a + EPSILON_MS then allowed = false end
      else
        local day = floor(stored / DAY_SHIFT)
        if day == today then level = stored - day * DAY_SHIFT end
        if level >= a then allowed = false end
      end
      out[o + 1] = level
      o = o + 1
    end
  end

  if allowed then
    local r = first_out
    local need, upto = 0, 0
    slot, previous = 0, 0
    for q = at + 2, stop, 3 do
      local code, a, b = spec[q], spec[q + 1], spec[q + 2]
      local kind = code % 4
      local k = base + (code - kind) / 4
      if kind == 3 then
        local value, count, newest = values[k], out[r + 1], out[r + 2]
        r = r + 3
        -- Kept sorted even if the clock stepped back.
        local t = now
        if newest > 0 then t = now + newest end
        if count == 0 then
          redis.call('SET', KEYS[k], spack('>BdI4I4', LOG_VERSION, now, 0, 0), 'PX', ceil(2 * b))
        else
          local _, origin, written = sunpack('>BdI4', value)
          local n = (#value - 13) / 4
          local lo = n - count + 1
          if lo <= 9 + a / 8 and now <= origin + written + b then
            -- The TTL set at the last rewrite (2 windows) still covers this entry's window.
            redis.call('APPEND', KEYS[k], spack('>I4', t - origin))
          elseif t - origin < REBASE_MS then
            redis.call('SET', KEYS[k], spack('>BdI4', LOG_VERSION, origin, t - origin) .. sub(value, 10 + 4 * lo) .. spack('>I4', t - origin), 'PX', ceil(2 * b + t - now))
          else
            -- Continuously in use for weeks: the origin moves to the window's start.
            local moved = floor(now - b)
            local parts = { spack('>BdI4', LOG_VERSION, moved, t - moved) }
            for i = lo, n do parts[#parts + 1] = spack('>I4', origin - moved + sunpack('>I4', value, 10 + 4 * i)) end
            parts[#parts + 1] = spack('>I4', t - moved)
            redis.call('SET', KEYS[k], table.concat(parts), 'PX', ceil(2 * b + t - now))
          end
        end
      else
        if k == previous then slot = slot + 1 else slot, previous, need, upto = 0, k, 0, 0 end
        local doubles, level = fixed[k], out[r + 1]
        r = r + 1
        -- What the counter's TTL must cover (need), and how far to set it when it does not (upto).
        if kind == 1 then
          local tat = now + level + a
          doubles[slot + 2] = tat
          if tat > need then need = tat end
          if tat + a * (b + 1) > upto then upto = tat + a * (b + 1) end
        else
          doubles[slot + 2] = today * DAY_SHIFT + level + 1
          if midnight > need then need = midnight end
          if midnight > upto then upto = midnight end
        end
        -- Written once, after its last policy.
        if q + 3 > stop or base + (spec[q + 3] - spec[q + 3] % 4) / 4 ~= k then
          local format = sub(formats, 1, slot + 3)
          if need <= doubles[1] then
            redis.call('SET', KEYS[k], spack(format, unpack(doubles, 1, slot + 2)), 'KEEPTTL')
          else
            doubles[1] = upto
            redis.call('SET', KEYS[k], spack(format, unpack(doubles, 1, slot + 2)), 'PX', ceil(upto - now))
          end
        end
      end
    end
  end
  base = base + spec[at + 1]
  at = stop + 3
  if not allowed then break end
end
return spack(sub(formats, 1, o + 1), unpack(out, 1, o))
