-- Extend a lease only if the caller still owns it (compare-and-pexpire); the watchdog's step.
--
-- KEYS[1]  the lock key
-- ARGV[1]  the owner's token
-- ARGV[2]  the new lease in milliseconds (integer, 1 .. 86400000)
--
-- Returns  1            renewed
--          0            not renewed: the lease ran out or another owner holds the lock
--          {2, reason}  invalid input, nothing written: "invalid-ttl"

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

local ttl = ARGV[2]
if not bounded_positive(ttl, 86400000) then
  return {2, 'invalid-ttl'}
end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ttl)
end
return 0
