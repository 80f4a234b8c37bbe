-- Token-bucket rate limiter: bursts up to ARGV[1], refilled at ARGV[2] tokens per second,
-- timed by the server's clock (TIME), never the caller's. Over any span of t seconds it
-- admits at most capacity + rate * t tokens.
--
-- KEYS[1]  a hash {tokens, ts}: tokens left (may be fractional) at server time ts (ms)
-- ARGV[1]  capacity (the burst): decimal digits, 1 .. 1000000
-- ARGV[2]  refill rate in tokens per second: decimal digits, 1 .. 1000000
-- ARGV[3]  cost of this request in tokens: decimal digits, 1 .. capacity
--
-- Returns  {1, remaining, 0}             allowed; whole tokens left
--          {0, remaining, retry_after_ms}  limited; enough tokens in retry_after_ms
--          {2, reason}                    invalid, nothing written: "invalid-arguments",
--                                         "invalid-state" (the hash is not a bucket)
-- The key always gets a TTL: the time the bucket needs to be full again (a missing bucket
-- is a full one, so nothing is lost when it expires).
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

local capacity = bounded_positive(ARGV[1], 1000000)
local rate = bounded_positive(ARGV[2], 1000000)
local cost = capacity and bounded_positive(ARGV[3], capacity)
if not capacity or not rate or not cost then
  return {2, 'invalid-arguments'}
end

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens, ts = capacity, now
if state[1] or state[2] then
  tokens, ts = tonumber(state[1]), tonumber(state[2])
  if not tokens or not ts or tokens < 0 or tokens > capacity then
    return {2, 'invalid-state'}
  end
end

local elapsed = now - ts
if elapsed < 0 then
  elapsed = 0
end
tokens = math.min(capacity, tokens + elapsed * rate / 1000)
local allowed = tokens >= cost
if allowed then
  tokens = tokens - cost
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.6f', tokens), 'ts', now)
redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil((capacity - tokens) * 1000 / rate)))
if allowed then
  return {1, math.floor(tokens), 0}
end
return {0, math.floor(tokens), math.ceil((cost - tokens) * 1000 / rate)}
