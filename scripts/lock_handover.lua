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

-- prelude: bounded_positive
-- A decimal integer argument in 1 ..= max, or nil. Digits only, no sign, no leading zero,
-- no exponent: tonumber alone would also take ' 12', '0x10' and '1e3'.
local function bounded_positive(s, max)
  if type(s) ~= 'string' or #s > #string.format('%d', max) or not string.match(s, '^[1-9]%d*$') then
    return nil
  end
  local n = tonumber(s)
  if n > max then
    return nil
  end
  return n
end
-- end prelude (a copy of scripts/prelude.lua: EVAL has no require; client/tests/script_prelude.rs keeps it current)

local new_token = ARGV[2]
local ttl = ARGV[3]
if type(new_token) ~= 'string' or #new_token == 0 or new_token == ARGV[1] then
  return {2, 'invalid-token'}
end
if not bounded_positive(ttl, 86400000) then
  return {2, 'invalid-ttl'}
end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return {0, 0}
end
redis.call('SET', KEYS[1], new_token, 'PX', ttl)
return {1, redis.call('INCR', KEYS[2])}
