-- Keep the maximum: store ARGV[1] only if it is greater than what is stored, and mark the
-- key dirty for a write-back job. A read position that only moves forward needs no lock:
-- the compare and the write happen in one step.
--
-- KEYS[1]  the value key (a string holding a non-negative integer)
-- KEYS[2]  the dirty set: keys changed since the write-back job last drained it
-- ARGV[1]  the candidate: a non-negative decimal integer below 2^63, no leading zeros
--
-- Returns  1  stored (the value increased; KEYS[1] was added to the dirty set)
--          0  not stored (the stored value is greater or equal)
--          an error reply "ERR invalid-id" or "ERR invalid-stored-value", nothing written
-- Numbers are compared as decimal strings, not Lua numbers: ids such as Snowflake ids pass
-- 2^53, where Lua's doubles can no longer tell neighbours apart.
local MAX = '9223372036854775807'

local function valid(s)
  if type(s) ~= 'string' or #s == 0 or #s > #MAX then
    return false
  end
  if not string.match(s, '^%d+$') or (#s > 1 and string.sub(s, 1, 1) == '0') then
    return false
  end
  return #s < #MAX or s <= MAX
end

-- a > b for valid decimal strings: the longer is larger; equal lengths compare as text.
local function greater(a, b)
  if #a ~= #b then
    return #a > #b
  end
  return a > b
end

local candidate = ARGV[1]
if not valid(candidate) then
  return redis.error_reply('ERR invalid-id')
end
local current = redis.call('GET', KEYS[1])
if current and not valid(current) then
  return redis.error_reply('ERR invalid-stored-value')
end
if current and not greater(candidate, current) then
  return 0
end
redis.call('SET', KEYS[1], candidate)
redis.call('SADD', KEYS[2], KEYS[1])
return 1
