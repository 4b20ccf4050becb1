-- Check for existing position by IP
local existing = redis.call('GET', KEYS[4])
if existing then
    return {0, existing}  -- Return existing position
end

-- Add to queue list
redis.call('RPUSH', KEYS[1], ARGV[1])

-- Add to sorted set for position tracking
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])

-- Create position metadata
redis.call('HSET', KEYS[3],
    'status', 'waiting',
    'enqueued_at', ARGV[2],
    'last_heartbeat', ARGV[2],
    'metadata', ARGV[5]
)
redis.call('EXPIRE', KEYS[3], ARGV[4])

-- Map IP to position
redis.call('SET', KEYS[4], ARGV[1], 'EX', ARGV[4])

-- Add to heartbeat tracking
redis.call('ZADD', KEYS[5], math.floor(ARGV[2] / 1000000), ARGV[1])

return {1, ARGV[1]}  -- Success, return position_id
