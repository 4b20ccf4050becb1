-- Check position exists
if redis.call('EXISTS', KEYS[1]) == 0 then
    return 0  -- Position not found
end

-- Update heartbeat timestamp
redis.call('HSET', KEYS[1], 'last_heartbeat', ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])

-- Update sorted set
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])

return 1  -- Success
