-- Takes back a write-ahead mark that could not be confirmed (too few replicas acknowledged it, or
-- its reply was lost), whose write was therefore not sent. Only the token's own mark over none
-- (sentBy): an earlier attempt's mark, which may have preceded a write, stays.
-- KEYS[1]: the record. ARGV: token. Returns 1 when taken back, else 0.

local record = redis.call('HMGET', KEYS[1], 'token', 'state', 'sentBy')
if record[1] ~= ARGV[1] or record[2] ~= 'in_progress' or record[3] ~= ARGV[1] then return 0 end
redis.call('HDEL', KEYS[1], 'sentAt', 'sentBy')
return 1
