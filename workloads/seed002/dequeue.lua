-- Try each priority level
for i = 1, 4 do
    local position_id = redis.call('LPOP', KEYS[i])
    if position_id then
        -- Remove from sorted set
        redis.call('ZREM', KEYS[5], position_id)
        
        -- Update position status
        redis.call('HSET', 'position:' .. position_id,
            'status', 'admitted',
            'session_id', ARGV[1],
            'admitted_at', ARGV[2]
        )
        
        -- Add to active sessions
        redis.call('SADD', KEYS[6], ARGV[1])
        
        return position_id
    end
end

return nil  -- Queue empty
