-- Write-ahead: a write whose outcome cannot be observed is about to be sent. Records the time
-- (the server's clock) and renews the lease, only while the token still holds the claim. The first
-- mark also names its token (sentBy), so that unmark-sent takes back only a mark of its own.
-- A write sent near the end of the retention keeps the record until it has settled (the holder's
-- settleMs), or a request after the expiry would be claimed afresh and send it again while it may
-- still run.
-- KEYS[1]: the record. ARGV: token, lease_ms. Returns 1 when marked, else 0 (send nothing).

local record = redis.call('HMGET', KEYS[1], 'token', 'state', 'sentAt', 'settleMs')
if record[1] ~= ARGV[1] or record[2] ~= 'in_progress' then return 0 end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('HSET', KEYS[1], 'sentAt', now, 'leaseUntil', now + tonumber(ARGV[2]))
if not record[3] then redis.call('HSET', KEYS[1], 'sentBy', ARGV[1]) end
local settle_ms = tonumber(record[4])
if settle_ms and redis.call('PTTL', KEYS[1]) < settle_ms then redis.call('PEXPIRE', KEYS[1], settle_ms) end
return 1
