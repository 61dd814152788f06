-- Checks and consumes a request's rate limits (contract §4) in one atomic step; the rules and their
-- reports are in src/stores/rate-policies.ts, the memory twin in src/stores/memory/rate-limit-store.ts.
--
-- A group is at most one counter of a gcra and/or a day policy, and at most one log (what the
-- source IP's and a key's groups are). Groups are evaluated in order, each all-or-nothing; a refused
-- group ends the evaluation and writes nothing.
--
-- KEYS: per group, its counter (when it has a gcra or day policy), then its log, or its headed log's
--   header (all in one slot: a cluster gets one group per call); last, the headed log itself.
-- ARGV[1]: the groups, packed as doubles (ARGV[2] is its struct format). Per group its parts: 1 gcra,
--   2 day, 4 log or 8 headed log, summed; then for gcra interval_ms and burst, for day its limit, for
--   a log its limit and window_ms, in that order, each only when the group has it. Only the first
--   group's log may be headed, and only in a group of its own.
-- ARGV[3]: `>` and at least as many `d` as the longest reply (its format is cut from it).
--
-- A counter is three big-endian doubles: [expires_at, TAT, day * 2^36 + count]. A log is a 13-byte
-- header, [version (byte) 2, origin (double, ms since the epoch), written (uint32, ms after origin:
-- when it was last rewritten)], then the admit times, oldest first, each a uint32 of ms after
-- origin: 4 bytes an entry, since reading a value into Lua costs by its size. Never more than
-- limit + limit / 8 + 8 entries (at most `limit` inside the window). Anything of another layout
-- (another version's data) counts as empty and is overwritten. Times are whole ms on the server's
-- clock (TIME, rounded up), so an offset is exact.
--
-- A headed log (the source address's: its state is reported only when it refuses) is not read while
-- it is far from full. Redis's Lua hashes every byte of every string it takes in, so reading a log
-- costs by its length, more than anything else a log needs. Its header key holds six doubles:
-- [origin, rewritten (when the log's TTL was last set), full_until, newest, limit, window_ms].
-- - It lives one window from `rewritten`: while it is there, the log's TTL (two windows from then)
--   covers an entry appended now, under the same window. The request's entry is appended first;
--   APPEND answers the log's length, and a log of at most `limit` entries with it held fewer than
--   `limit` in the window before it: allowed, exactly as a search would decide (the reply's count
--   is the log's length less one, entries already out of the window included). The log grows by
--   appends alone, up to `limit` entries, until it is read: near its limit, or once the header is
--   gone.
-- - Read (without the entry just appended), the log is decided as any other and put back as it was
--   when refused; each time its TTL is set again the header is written anew.
-- - A refusal is kept in the header (full_until: when the entry whose departure makes room leaves;
--   newest: the newest entry's time): until then, under the same limit and window, a request is
--   refused from the header alone, since nothing is admitted meanwhile. A flood costs no log read.
-- - An entry appended before the decision is at `now` (the log's newest is not known): after the
--   server's clock stepped back by less than the time since `rewritten`, it may be out of order
--   until it leaves the window. A clock set back further takes the read path, which keeps order.
--
-- Cost per request: TIME, one MGET, then one write per counter consumed: SET ... KEEPTTL, or APPEND
-- of one entry to a log, with a TTL set again only when the stored one would end too soon (a headed
-- log: its APPEND before the decision, a GET only near its limit, nothing when refused from its
-- header). Lua in
-- Redis costs tens of CPU instructions a bytecode and about a thousand a table, a string made or a
-- struct call (callgrind), as much as the commands: the code is straight, no table is made but the
-- spec and the reply, and each value is read once.
--
-- Reply (packed doubles): now, then per group checked, in the order gcra, day, log: for gcra TAT -
-- now, for day the count before this request, for log the count in the window, newest - now and,
-- when full, the time (- now) of the entry whose departure makes room. The caller derives the rest.

local sunpack, spack, sub, floor, ceil = struct.unpack, struct.pack, string.sub, math.floor, math.ceil
local time = redis.call('TIME')
local now = time[1] * 1000 + ceil(time[2] / 1000)
local spec = { sunpack(ARGV[2], ARGV[1]) }
-- The headed log, the first group's when it has one, is the last key: not read here.
local headed = spec[1] >= 8
local values = redis.call('MGET', unpack(KEYS, 1, headed and #KEYS - 1 or #KEYS))
-- A log's origin moves (its entries rewritten) once this old: offsets stay far below 2^32.
local LOG_VERSION, REBASE_MS = 2, 2147483648
local DAY_MS, DAY_SHIFT, EPSILON_MS = 86400000, 68719476736, 0.001

-- Sized at once for two full groups: growing a table reallocates it at every power of two.
local out = { now, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 }
local o, at, last, k = 1, 1, #spec - 1, 0 -- unpack ends with the position after the last value
while at <= last do
  local parts = spec[at]
  at = at + 1
  local allowed = true

  -- The counter: gcra and day.
  local counter, interval, burst, day_limit, today, expires, tat, stamp, ahead, today_count
  if parts % 4 > 0 then
    k = k + 1
    counter = k
    local value = values[k]
    if value and #value == 24 then expires, tat, stamp = sunpack('>ddd', value) else expires, tat, stamp = 0, 0, 0 end
    if parts % 2 == 1 then
      interval, burst = spec[at], spec[at + 1]
      at = at + 2
      ahead = 0
      if tat > now then ahead = tat - now end
      if ahead > burst * interval + EPSILON_MS then allowed = false end
      o = o + 1
      out[o] = ahead
    end
    if parts % 4 >= 2 then
      day_limit = spec[at]
      at = at + 1
      today, today_count = floor(now / DAY_MS), 0
      local day = floor(stamp / DAY_SHIFT)
      if day == today then today_count = stamp - day * DAY_SHIFT end
      if today_count >= day_limit then allowed = false end
      o = o + 1
      out[o] = today_count
    end
  end

  -- The log. A headed log's: header (its KEYS index), from and rewritten (the header's, when there),
  -- appended (this request's entry at now - from, before the decision), decided (without reading).
  local log, log_limit, window, value, count, newest, n, origin, written
  local header, from, rewritten, appended, decided
  local leaving = 0
  if parts >= 4 then
    log_limit, window = spec[at], spec[at + 1]
    at = at + 2
    k = k + 1
    count, newest = 0, 0
    if parts >= 8 then
      header, log = k, #KEYS
      value = values[k]
      if value and #value == 48 then
        local full_until, newest_at, full_limit, full_window
        from, rewritten, full_until, newest_at, full_limit, full_window = sunpack('>dddddd', value)
        if now < full_until and full_limit == log_limit and full_window == window then
          -- Refused as the last request was: nothing admitted since, nothing leaves before then.
          count, newest, leaving, allowed, decided = log_limit, newest_at - now, full_until - window - now, false, true
        elseif now >= rewritten and full_window == window then
          -- (Under another window the log's TTL, set for that one, may not cover this entry's.)
          local length = redis.call('APPEND', KEYS[log], spack('>I4', now - from))
          appended = true
          if (length - 13) % 4 == 0 and length > 16 and length - 13 <= 4 * log_limit then
            count, decided = (length - 17) / 4, true
          end
        end
      end
      value = nil
      if not decided then
        value = redis.call('GET', KEYS[log])
        if appended and value then value = sub(value, 1, #value - 4) end
      end
    else
      log = k
      value = values[k]
    end
    if value and #value > 16 and #value % 4 == 1 then
      local version, oldest
      version, origin, written, oldest = sunpack('>BdI4I4', value)
      if version == LOG_VERSION then
        n = (#value - 13) / 4
        -- Entry i (at byte 10 + 4 i) counts while its offset is above edge; lo is the first that does.
        local edge = now - window - origin
        local last = sunpack('>I4', value, 10 + 4 * n)
        local lo = 1
        if last <= edge then
          lo = n + 1
        elseif oldest <= edge then
          -- e(below) <= edge < e(above). Requests spread over the window put the edge about where
          -- it falls between the oldest and the newest time: the search starts there and gallops
          -- out, usually two probes (a gallop from the oldest crossed every entry kept since the
          -- last rewrite, up to limit / 8 + 9); at worst about twice a binary search.
          local below, above, step = 1, n, 1
          local guess = 1 + floor((edge - oldest) * (n - 1) / (last - oldest))
          if guess >= n then guess = n - 1 end
          if sunpack('>I4', value, 10 + 4 * guess) <= edge then
            below = guess
            while below + step < above and sunpack('>I4', value, 10 + 4 * (below + step)) <= edge do
              below, step = below + step, step * 2
            end
            if below + step < above then above = below + step end
          else
            above = guess
            while above - step > below and sunpack('>I4', value, 10 + 4 * (above - step)) > edge do
              above, step = above - step, step * 2
            end
            if above - step > below then below = above - step end
          end
          while above - below > 1 do
            local mid = floor((below + above) / 2)
            if sunpack('>I4', value, 10 + 4 * mid) > edge then above = mid else below = mid end
          end
          lo = above
        end
        count = n - lo + 1
        if count > 0 then newest = origin + last - now end
        if count >= log_limit then
          leaving = origin + sunpack('>I4', value, 10 + 4 * (lo + count - log_limit)) - now
          allowed = false
        end
      end
    end
    -- A header written with another origin than its log's (another version wrote the log): dropped.
    if from and origin and from ~= origin then
      redis.call('DEL', KEYS[header])
      from = nil
    end
    out[o + 1], out[o + 2], out[o + 3] = count, newest, leaving
    o = o + 3
  end

  if not allowed then
    if header and not decided then
      -- The log as it was (its TTL kept), and the refusal in the header (if there) until room is made.
      if appended then redis.call('SET', KEYS[log], value, 'KEEPTTL') end
      if from then
        redis.call('SET', KEYS[header], spack('>dddddd', from, rewritten, now + leaving + window, now + newest, log_limit, window), 'KEEPTTL')
      end
    end
    break
  end

  if counter then
    -- What the counter's TTL must cover (need), and how far to set it when it does not (upto).
    local need, upto = 0, 0
    if interval then
      tat = now + ahead + interval
      need, upto = tat, tat + interval * (burst + 1)
    end
    if day_limit then
      local midnight = (today + 1) * DAY_MS
      stamp = today * DAY_SHIFT + today_count + 1
      if midnight > need then need = midnight end
      if midnight > upto then upto = midnight end
    end
    if need <= expires then
      redis.call('SET', KEYS[counter], spack('>ddd', expires, tat, stamp), 'KEEPTTL')
    else
      redis.call('SET', KEYS[counter], spack('>ddd', upto, tat, stamp), 'PX', ceil(upto - now))
    end
  end

  if log and not decided then
    -- Kept sorted even if the clock stepped back.
    local t = now
    if newest > 0 then t = now + newest end
    -- The origin of a log rewritten (its TTL set again), for its header.
    local renewed
    if count == 0 then
      redis.call('SET', KEYS[log], spack('>BdI4I4', LOG_VERSION, now, 0, 0), 'PX', ceil(2 * window))
      renewed = now
    else
      local lo = n - count + 1
      if lo <= 9 + log_limit / 8 and now <= origin + written + window then
        -- The TTL set at the last rewrite (2 windows) still covers this entry's window.
        if not appended then
          redis.call('APPEND', KEYS[log], spack('>I4', t - origin))
        elseif t ~= now or from ~= origin then
          -- Appended before the decision at now, from the header's origin: at t from the log's.
          redis.call('SET', KEYS[log], value .. spack('>I4', t - origin), 'KEEPTTL')
        end
      elseif t - origin < REBASE_MS then
        renewed = origin
        redis.call('SET', KEYS[log], spack('>BdI4', LOG_VERSION, origin, t - origin) .. sub(value, 10 + 4 * lo) .. spack('>I4', t - origin), 'PX', ceil(2 * window + t - now))
      else
        -- Continuously in use for weeks: the origin moves to the window's start.
        local moved = floor(now - window)
        local entries = { spack('>BdI4', LOG_VERSION, moved, t - moved) }
        for i = lo, n do entries[#entries + 1] = spack('>I4', origin - moved + sunpack('>I4', value, 10 + 4 * i)) end
        entries[#entries + 1] = spack('>I4', t - moved)
        redis.call('SET', KEYS[log], table.concat(entries), 'PX', ceil(2 * window + t - now))
        renewed = moved
      end
    end
    if header and renewed then
      redis.call('SET', KEYS[header], spack('>dddddd', renewed, now, 0, 0, log_limit, window), 'PX', ceil(window))
    end
  end
end
return spack(sub(ARGV[3], 1, o + 1), unpack(out, 1, o))
