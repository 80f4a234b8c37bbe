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
-- Numbers are compared as decimal strings (see the u63 helper below).

-- prelude: u63
-- Non-negative integers below 2^63 as canonical decimal strings, compared as strings:
-- ids such as Snowflake ids pass 2^53, where Lua's doubles can no longer tell neighbours apart.
local U63_MAX = '9223372036854775807'

local function valid_u63(s)
  if type(s) ~= 'string' or #s == 0 or #s > #U63_MAX then
    return false
  end
  if not string.match(s, '^%d+$') or (#s > 1 and string.sub(s, 1, 1) == '0') then
    return false
  end
  return #s < #U63_MAX or s <= U63_MAX
end

local function greater_u63(a, b)
  if #a ~= #b then
    return #a > #b
  end
  return a > b
end
-- end prelude (a copy of scripts/prelude.lua: EVAL has no require; client/tests/script_prelude.rs keeps it current)

local candidate = ARGV[1]
if not valid_u63(candidate) then
  return redis.error_reply('ERR invalid-id')
end
local current = redis.call('GET', KEYS[1])
if current and not valid_u63(current) then
  return redis.error_reply('ERR invalid-stored-value')
end
if current and not greater_u63(candidate, current) then
  return 0
end
redis.call('SET', KEYS[1], candidate)
redis.call('SADD', KEYS[2], KEYS[1])
return 1
