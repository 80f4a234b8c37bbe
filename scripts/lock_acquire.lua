-- Acquire a lock and hand out a fencing token, in one atomic step.
--
-- KEYS[1]  the lock key
-- KEYS[2]  the fencing counter key (never expires; only ever incremented)
-- ARGV[1]  the owner's token (random, unique per acquisition; non-empty)
-- ARGV[2]  the lease in milliseconds (integer, 1 .. 86400000)
--
-- Returns  {1, fence}        acquired; fence is strictly greater than every fence handed
--                            out before for this counter, so a resource that remembers the
--                            highest fence it has seen can reject a stale holder's write
--          {0, pttl}         held by someone else; pttl = milliseconds left on their lease
--          {2, reason}       invalid input, nothing written: "invalid-token", "invalid-ttl"

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

local token = ARGV[1]
local ttl = ARGV[2]
if type(token) ~= 'string' or #token == 0 then
  return {2, 'invalid-token'}
end
if not bounded_positive(ttl, 86400000) then
  return {2, 'invalid-ttl'}
end
if redis.call('SET', KEYS[1], token, 'NX', 'PX', ttl) then
  return {1, redis.call('INCR', KEYS[2])}
end
return {0, redis.call('PTTL', KEYS[1])}
