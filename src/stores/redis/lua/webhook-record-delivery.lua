-- Records an attempt on an account's endpoint (KEYS[1], a hash). ARGV[1]: the delivery status as
-- JSON, ARGV[2]: '1' when delivered, ARGV[3]: the attempt's time, ARGV[4]: the URL it was sent to.
-- Nothing when no URL, or another one (set while the attempt was in flight), is set.
if redis.call('HGET', KEYS[1], 'url') ~= ARGV[4] then return nil end
redis.call('HSET', KEYS[1], 'lastDelivery', ARGV[1])
if ARGV[2] == '1' then
  redis.call('HDEL', KEYS[1], 'failingSince')
else
  redis.call('HSETNX', KEYS[1], 'failingSince', ARGV[3])
end
return redis.call('HGETALL', KEYS[1])
