-- Release a lock only if the caller still owns it (compare-and-delete).
--
-- KEYS[1]  the lock key
-- ARGV[1]  the owner's token
--
-- Returns  1  released
--          0  not released: the lock expired, or another owner holds it now (a release after
--             a long pause must never delete someone else's lock)
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
