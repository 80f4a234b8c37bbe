-- Write hash fields only if the stored version is not newer: a batch carrying an old version
-- cannot overwrite a fresher edit, and replaying the same version is harmless.
--
-- KEYS[1]  the hash; its field "version" holds the version of the data in it
-- ARGV[1]  the version of this write: a non-negative decimal integer below 2^63
-- ARGV[2], ARGV[3], ...  field, value pairs (at least one pair; "version" is not allowed)
--
-- Returns  {1, version}  applied: the fields and the version were written together
--          {0, stored}   stale: the stored version is newer; nothing written
--          {2, reason}   invalid, nothing written: "invalid-version", "invalid-fields",
--                        "invalid-stored-version"
-- Versions compare as decimal strings (see the u63 helper below).

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

local version = ARGV[1]
if not valid_u63(version) then
  return {2, 'invalid-version'}
end
local n = #ARGV
if n < 3 or n % 2 ~= 1 then
  return {2, 'invalid-fields'}
end
for i = 2, n, 2 do
  if ARGV[i] == 'version' then
    return {2, 'invalid-fields'}
  end
end

local stored = redis.call('HGET', KEYS[1], 'version')
if stored then
  if not valid_u63(stored) then
    return {2, 'invalid-stored-version'}
  end
  if greater_u63(stored, version) then
    return {0, stored}
  end
end
local args = {'HSET', KEYS[1], 'version', version}
for i = 2, n do
  args[#args + 1] = ARGV[i]
end
redis.call(unpack(args))
return {1, version}
