-- Takes or renews the lease KEYS[1] for holder ARGV[1] for ARGV[2] ms; 0 while another holds it.
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', tonumber(ARGV[2]))
return 1
