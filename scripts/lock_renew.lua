-- Extend a lease only if the caller still owns it (compare-and-pexpire); the watchdog's step.
--
-- KEYS[1]  the lock key
-- ARGV[1]  the owner's token
-- ARGV[2]  the new lease in milliseconds (integer, 1 .. 86400000)
--
-- Returns  1            renewed
--          0            not renewed: the lease ran out or another owner holds the lock
--          {2, reason}  invalid input, nothing written: "invalid-ttl"
local ttl = ARGV[2]
if type(ttl) ~= 'string' or not string.match(ttl, '^[1-9]%d*$') or #ttl > 8 or tonumber(ttl) > 86400000 then
  return {2, 'invalid-ttl'}
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ttl)
end
return 0
