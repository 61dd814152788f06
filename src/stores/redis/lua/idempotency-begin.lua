-- Claims an idempotency key in one atomic step (contract §5). Mirrors
-- src/stores/memory/idempotency-store.ts. The clock is the server's (TIME).
--
-- KEYS[1]: the record, a hash {state, token, recordId, fingerprint, endpoint, createdAt,
--          leaseUntil, settleMs, sentAt, sentBy, status, headers, body}, scoped to account and client
--          key (not to the endpoint). settleMs is the holder's: mark-sent keeps the record that long.
-- ARGV: fingerprint, endpoint, lease_ms, retention_ms, stale_after_ms ('' for none), settle_ms,
--       new_token, new_record_id
-- Returns { 'acquired', token, record_id, sent_at ('' for none) } | { 'replay', status, headers_json, body }
--       | { 'in_progress', retry_after_ms } | { 'conflict' } | { 'stale' }
--   retry_after_ms: when asking again can tell more (see below), not always when the wait ends.

local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local key = KEYS[1]
local fingerprint, endpoint = ARGV[1], ARGV[2]
local lease_ms, retention_ms = tonumber(ARGV[3]), tonumber(ARGV[4])
local stale_after_ms, settle_ms = tonumber(ARGV[5]), tonumber(ARGV[6])
local token = ARGV[7]

local function claim(record_id, sent_at)
  redis.call('HSET', key, 'state', 'in_progress', 'token', token, 'leaseUntil', now + lease_ms, 'settleMs', settle_ms)
  return { 'acquired', token, record_id, sent_at or '' }
end

local record = redis.call('HMGET', key, 'state', 'fingerprint', 'endpoint', 'createdAt', 'leaseUntil',
  'status', 'headers', 'body', 'recordId', 'sentAt')
local state = record[1]

if not state then
  redis.call('HSET', key, 'fingerprint', fingerprint, 'endpoint', endpoint, 'createdAt', now, 'recordId', ARGV[8])
  redis.call('PEXPIRE', key, retention_ms)
  return claim(ARGV[8], nil)
end

-- Age counts from the first request; past it (more than the window: the spec replays "within one
-- hour") every use is stale, whatever the record holds.
if stale_after_ms and now - tonumber(record[4]) > stale_after_ms then
  return { 'stale' }
end

if record[2] ~= fingerprint or record[3] ~= endpoint then
  return { 'conflict' }
end

if state == 'completed' then
  return { 'replay', record[6], record[7], record[8] }
end

-- A live holder, or a sent write upstream may still be working on: wait for both.
local wait_until = 0
if state == 'in_progress' then wait_until = tonumber(record[5]) end
local sent_at = record[10]
if sent_at then wait_until = math.max(wait_until, tonumber(sent_at) + settle_ms) end
if wait_until > now then
  local wait = wait_until - now
  -- A live holder may answer any moment (then replayed): ask again after as long as it has run
  -- (since its lease was last set), at least a second; a client that follows this backs off by
  -- doubling. Past the holder, only the whole wait decides anything.
  local lease_until = tonumber(record[5])
  if state == 'in_progress' and lease_until > now then
    wait = math.min(wait, math.max(1000, now - (lease_until - lease_ms)))
  end
  return { 'in_progress', wait }
end

-- Unknown outcome, or a holder that died: the old token is void; the new holder reconciles when
-- something was sent, else executes fresh.
return claim(record[9], sent_at)
