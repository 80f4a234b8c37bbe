-- Claim-or-read for a consumer group worker: take the oldest pending entry that has been
-- idle for at least ARGV[3] ms (its consumer probably died), and only when there is none,
-- read one new entry. Doing both in one script means a worker never reads new work while
-- abandoned work waits, and no other worker can claim the same entry between the two.
--
-- KEYS[1]  the stream
-- ARGV[1]  the group (it must exist: NOGROUP otherwise)
-- ARGV[2]  the consumer (created on first use)
-- ARGV[3]  min idle time in ms, a non-negative integer
--
-- Returns  {'claimed', id, {field, value, ...}}   an idle pending entry, now ours
--          {'new', id, {field, value, ...}}       a new entry, now pending for us
--          {'none'}                               nothing to do
--          an error reply "ERR invalid-min-idle", nothing done
-- Pending entries whose stream entry was deleted are dropped by XAUTOCLAIM and skipped.

local min_idle = ARGV[3]
if type(min_idle) ~= 'string' or not string.match(min_idle, '^%d+$') or #min_idle > 15 then
  return redis.error_reply('ERR invalid-min-idle')
end

-- XAUTOCLAIM scans at most 10 x COUNT pending entries from the start; with COUNT 1 it
-- returns at most one entry, the oldest idle one it found.
local claimed = redis.call('XAUTOCLAIM', KEYS[1], ARGV[1], ARGV[2], min_idle, '0-0', 'COUNT', 1)
local entry = claimed[2][1]
if entry then
  return {'claimed', entry[1], entry[2]}
end

local new = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', 1, 'STREAMS', KEYS[1], '>')
if not new then
  return {'none'}
end
entry = new[1][2][1]
return {'new', entry[1], entry[2]}
