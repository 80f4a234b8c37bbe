-- Validation helpers shared by the pattern scripts.
--
-- Each script stands alone for EVAL (Redis loads one chunk, no require), so the helpers a
-- script uses are copied into it between a "-- prelude: <names>" line and "-- end prelude".
-- Edit them here only, then refresh the copies with
--   REDLAB_BLESS=1 cargo test -p redlab-client --test script_prelude
-- That test fails while any committed script holds a stale copy.

-- helper: bounded_positive
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

-- helper: u63
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
