-- Claims an idempotency key in one atomic step (contract §5). Mirrors
-- src/stores/memory/idempotency-store.ts. The clock is the server's (TIME).
--
-- KEYS[1]: the record, a hash {state, token, fingerprint, endpoint, createdAt, leaseUntil,
--          status, headers, body}, scoped to account and client key (not to the endpoint).
-- ARGV: fingerprint, endpoint, lease_ms, retention_ms, stale_after_ms ('' for none), new_token
-- Returns { 'acquired', token, reconcile 0|1 } | { 'replay', status, headers_json, body }
--       | { 'in_progress', retry_after_ms } | { 'conflict' } | { 'stale' }

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local key = KEYS[1]
local fingerprint, endpoint = ARGV[1], ARGV[2]
local lease_ms, retention_ms = tonumber(ARGV[3]), tonumber(ARGV[4])
local stale_after_ms = tonumber(ARGV[5])
local token = ARGV[6]

local function claim(reconcile)
  redis.call('HSET', key, 'state', 'in_progress', 'token', token, 'leaseUntil', now + lease_ms)
  return { 'acquired', token, reconcile }
end

local record = redis.call('HMGET', key, 'state', 'fingerprint', 'endpoint', 'createdAt', 'leaseUntil',
  'status', 'headers', 'body')
local state = record[1]

if not state then
  redis.call('HSET', key, 'fingerprint', fingerprint, 'endpoint', endpoint, 'createdAt', now)
  redis.call('PEXPIRE', key, retention_ms)
  return claim(0)
end

if record[2] ~= fingerprint or record[3] ~= endpoint then
  return { 'conflict' }
end

if state == 'completed' then
  -- Age counts from the first request, not from completion.
  if stale_after_ms and now - tonumber(record[4]) >= stale_after_ms then
    return { 'stale' }
  end
  return { 'replay', record[6], record[7], record[8] }
end

local lease_until = tonumber(record[5])
if state == 'in_progress' and lease_until > now then
  return { 'in_progress', math.max(1, lease_until - now) }
end

-- Unknown outcome, or a holder that died: the new holder must reconcile; the old token is void.
return claim(1)
