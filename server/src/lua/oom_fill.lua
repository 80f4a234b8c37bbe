-- Fills the Lua heap to within a few bytes of its limit (live data in `hog`), in ever smaller
-- steps, each step's failure caught. Spliced into scripts by the out-of-memory tests:
-- server/src/lua/oom_tests.rs and server/tests/lua_oom_leaks.rs.
collectgarbage()
local hog, n = nil, 0
local function fill(size)
  local base = string.rep('x', size)
  while true do n = n + 1; hog = {hog, base .. n} end
end
-- The string rounds can end on a failed resize of the string table, with kilobytes still free:
-- small tables take the rest.
local function fill_tables()
  while true do hog = {hog} end
end
-- Nothing between the fills may allocate: it would run out outside any pcall.
local sizes = {65536, 4096, 256, 16, 1}
for i = 1, 5 do pcall(fill, sizes[i]) end
pcall(fill_tables)
