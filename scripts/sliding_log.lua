-- Sliding-log rate limiter: at most ARGV[1] hits in any window of ARGV[2] milliseconds,
-- timed by the server's clock (TIME), never the caller's.
--
-- KEYS[1]  a sorted set: one member per admitted hit, scored by its server time in ms
-- ARGV[1]  the limit: decimal digits, 1 .. 100000
-- ARGV[2]  the window in milliseconds: decimal digits, 1 .. 86400000
-- ARGV[3]  a unique id for this hit (non-empty; the caller makes it unique)
--
-- Returns  {1, remaining, 0}       allowed; remaining hits left in the current window
--          {0, 0, retry_after_ms}  limited; the oldest hit leaves the window in retry_after_ms
--          {2, reason}             invalid, nothing written: "invalid-arguments", "invalid-id"
-- The key's TTL is the window, renewed on every admitted hit: an idle log disappears.
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

local limit = bounded_positive(ARGV[1], 100000)
local window = bounded_positive(ARGV[2], 86400000)
if not limit or not window then
  return {2, 'invalid-arguments'}
end
if type(ARGV[3]) ~= 'string' or #ARGV[3] == 0 then
  return {2, 'invalid-id'}
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- The window is (now - window, now]: a hit exactly one window old has left it.
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count >= limit then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, 0, tonumber(oldest[2]) + window - now}
end
redis.call('ZADD', KEYS[1], now, ARGV[3])
redis.call('PEXPIRE', KEYS[1], window)
return {1, limit - count - 1, 0}
