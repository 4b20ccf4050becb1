-- Sliding-window counter rate limiter (the pattern seed 003 uses through
-- @upstash/ratelimit): a fixed-window counter per window, the previous
-- window's count weighted by how much of it still overlaps the sliding window.
-- KEYS[1] = counter of the current window, KEYS[2] = of the previous one
-- ARGV = limit, now (ms), window (ms), increment
local limit = tonumber(ARGV[1])
local now = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local increment = tonumber(ARGV[4])

local current = tonumber(redis.call('GET', KEYS[1]) or '0')
local previous = tonumber(redis.call('GET', KEYS[2]) or '0')
local elapsed = (now % window) / window
local used = math.floor(previous * (1 - elapsed) + current)
if used + increment > limit then
  return -1
end
local count = redis.call('INCRBY', KEYS[1], increment)
if count == increment then
  redis.call('PEXPIRE', KEYS[1], window * 2 + 1000)
end
return limit - used - increment
