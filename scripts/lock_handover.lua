-- Hand a lock from its current owner to a new one (compare-and-set), with a fresh lease and
-- a new fencing token, so there is never a moment with no owner or with two.
--
-- KEYS[1]  the lock key
-- KEYS[2]  the fencing counter key
-- ARGV[1]  the current owner's token
-- ARGV[2]  the new owner's token (non-empty, different from the current one)
-- ARGV[3]  the new lease in milliseconds (integer, 1 .. 86400000)
--
-- Returns  {1, fence}    handed over; fence is the new owner's fencing token
--          {0, 0}        not handed over: the caller no longer owns the lock
--          {2, reason}   invalid input, nothing written: "invalid-token", "invalid-ttl"
local new_token = ARGV[2]
local ttl = ARGV[3]
if type(new_token) ~= 'string' or #new_token == 0 or new_token == ARGV[1] then
  return {2, 'invalid-token'}
end
if type(ttl) ~= 'string' or not string.match(ttl, '^[1-9]%d*$') or #ttl > 8 or tonumber(ttl) > 86400000 then
  return {2, 'invalid-ttl'}
end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return {0, 0}
end
redis.call('SET', KEYS[1], new_token, 'PX', ttl)
return {1, redis.call('INCR', KEYS[2])}
