-- Checks the rate-limit policies of one request, in groups (contract §4): the groups in order, each
-- all-or-nothing (consumed from only when all of its policies allow, so a refused group consumes
-- nothing), and a refused group ends the script: the groups after it are neither checked nor
-- consumed. Mirrors src/stores/memory/rate-limit-store.ts.
--
-- KEYS[i]: policy i's counter, the groups one after another. The KEYS of one group carry the same
-- hash tag (one cluster slot); several groups may span slots, which only a standalone server runs.
-- ARGV[1]: a unique member for sliding-log entries. Then per group: its number of policies, and
-- three values per policy, kind first:
--   gcra  interval_ms burst   TAT string (ms); one per interval sustained, burst more at once
--   day   limit       0       hash {day, count}: a fixed counter per UTC calendar day
--   log   limit       window  sorted set of timestamps: exact rolling window
-- Returns { allowed (every group allowed), then per policy checked: allowed, remaining, reset_ms,
-- retry_after_ms }; the policies of groups after a refused one are left out.
-- Time is the server's (TIME), in ms with a microsecond fraction, so instances need no clock sync.
-- (redis.call passes numbers on in their shortest exact form, so the fraction survives storage.)

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
local member = ARGV[1]
local DAY_MS = 86400000
-- Tolerance for floating-point TAT arithmetic (an interval such as 60000 / 7 is not exact).
local EPSILON_MS = 0.001

local function ceil_ms(x)
  if x <= 0 then return 0 end
  return math.ceil(x)
end

local function at_least_1(x)
  return math.max(1, math.ceil(x))
end

local rules = {}

rules.gcra = {
  check = function(key, interval, burst)
    local tat = math.max(tonumber(redis.call('GET', key)) or now, now)
    local allowed = tat - now <= burst * interval + EPSILON_MS
    local retry = 0
    if not allowed then retry = at_least_1(tat - now - burst * interval) end
    return { allowed = allowed, retry = retry, tat = tat }
  end,
  consume = function(key, interval, burst, state)
    state.tat = state.tat + interval
    redis.call('SET', key, state.tat, 'PX', at_least_1(state.tat - now))
  end,
  report = function(key, interval, burst, state)
    local remaining = math.floor(((burst + 1) * interval - (state.tat - now) + EPSILON_MS) / interval)
    return math.max(0, math.min(burst + 1, remaining)), ceil_ms(state.tat - now)
  end,
}

rules.day = {
  check = function(key, limit)
    local today = math.floor(now / DAY_MS)
    local stored = redis.call('HMGET', key, 'day', 'count')
    local count = 0
    if tonumber(stored[1]) == today then count = tonumber(stored[2]) end
    local until_midnight = (today + 1) * DAY_MS - now
    local allowed = count < limit
    local retry = 0
    if not allowed then retry = at_least_1(until_midnight) end
    return { allowed = allowed, retry = retry, today = today, count = count, until_midnight = until_midnight }
  end,
  consume = function(key, limit, _, state)
    state.count = state.count + 1
    redis.call('HSET', key, 'day', state.today, 'count', state.count)
    redis.call('PEXPIRE', key, at_least_1(state.until_midnight))
  end,
  report = function(key, limit, _, state)
    local reset = 0
    if state.count > 0 then reset = ceil_ms(state.until_midnight) end
    return math.max(0, limit - state.count), reset
  end,
}

rules.log = {
  check = function(key, limit, window)
    -- An entry at time t counts while now - t < window; pruning older ones consumes nothing.
    redis.call('ZREMRANGEBYSCORE', key, '-inf', now - window)
    local count = redis.call('ZCARD', key)
    local allowed = count < limit
    local retry = 0
    if not allowed then
      -- The oldest entry whose departure brings the count below the limit.
      local entry = redis.call('ZRANGE', key, count - limit, count - limit, 'WITHSCORES')
      retry = at_least_1(tonumber(entry[2]) + window - now)
    end
    return { allowed = allowed, retry = retry, count = count }
  end,
  consume = function(key, limit, window, state)
    redis.call('ZADD', key, now, member)
    redis.call('PEXPIRE', key, at_least_1(window))
    state.count = state.count + 1
  end,
  report = function(key, limit, window, state)
    if state.count == 0 then return limit, 0 end
    local newest = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
    return math.max(0, limit - state.count), ceil_ms(tonumber(newest[2]) + window - now)
  end,
}

local result = { 1 }
local key_index, arg_index = 1, 2
while arg_index <= #ARGV do
  local size = tonumber(ARGV[arg_index])
  local group, group_allowed = {}, true
  for i = 1, size do
    local base = arg_index + 1 + (i - 1) * 3
    local key = KEYS[key_index + i - 1]
    local rule = rules[ARGV[base]]
    local a, b = tonumber(ARGV[base + 1]), tonumber(ARGV[base + 2])
    local state = rule.check(key, a, b)
    group[i] = { key = key, rule = rule, a = a, b = b, state = state }
    group_allowed = group_allowed and state.allowed
  end
  key_index, arg_index = key_index + size, arg_index + 1 + size * 3

  for _, policy in ipairs(group) do
    if group_allowed then policy.rule.consume(policy.key, policy.a, policy.b, policy.state) end
    local remaining, reset = policy.rule.report(policy.key, policy.a, policy.b, policy.state)
    table.insert(result, policy.state.allowed and 1 or 0)
    table.insert(result, remaining)
    table.insert(result, reset)
    table.insert(result, policy.state.retry)
  end
  if not group_allowed then
    result[1] = 0
    break
  end
end
return result
