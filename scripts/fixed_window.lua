-- Fixed-window rate limiter: at most ARGV[1] hits per window of ARGV[2] seconds.
--
-- KEYS[1]  the window's counter key (a string holding a non-negative integer)
-- ARGV[1]  the limit: decimal digits only, 1 .. 1000000
-- ARGV[2]  the window in seconds: decimal digits only, 1 .. 86400
--
-- Returns  {1, count, ttl_ms}  allowed; count includes this hit; the window ends in ttl_ms
--          {0, count, ttl_ms}  limited; retry after ttl_ms
--          {2, reason}         invalid, nothing written; reason is one of
--                              "invalid-arguments"  a limit or window that is not such an integer
--                                                   ("1.5", "1e3", "-1", "0", "abc" ...)
--                              "invalid-counter"    the key holds something other than a counter
--                              "missing-ttl"        the counter exists without a TTL: it would
--                                                   never reset, so it is reported, not repaired
-- The TTL is set on the first hit of a window only: later hits never extend the window.
-- A key of another type makes the GET fail with WRONGTYPE, which reaches the caller as is.
local MAX_LIMIT = 1000000
local MAX_WINDOW = 86400

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

local limit = bounded_positive(ARGV[1], MAX_LIMIT)
local window = bounded_positive(ARGV[2], MAX_WINDOW)
if not limit or not window then
  return {2, 'invalid-arguments'}
end

local current = redis.call('GET', KEYS[1])
if not current then
  local count = redis.call('INCR', KEYS[1])
  redis.call('EXPIRE', KEYS[1], window)
  return {1, count, window * 1000}
end
if #current > 7 or not string.match(current, '^%d+$') or tonumber(current) > MAX_LIMIT then
  return {2, 'invalid-counter'}
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  return {2, 'missing-ttl'}
end
local count = tonumber(current)
if count >= limit then
  return {0, count, ttl}
end
return {1, redis.call('INCR', KEYS[1]), ttl}
