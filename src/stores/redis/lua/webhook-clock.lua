-- The server's clock (TIME) in ms, read on the node that holds the account's snapshot (KEYS[1],
-- named only to route the call in a cluster), whose records webhook-record-snapshot.lua stamps by
-- the same clock: read times and start times compared with those stamps come from here, so that
-- instances' clocks never meet in one comparison.
local time = redis.call('TIME')
return tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
