-- Gives up the lease KEYS[1] if holder ARGV[1] holds it (another's is left alone).
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
