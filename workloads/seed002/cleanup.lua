-- Get expired positions
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])

if #expired == 0 then
    return {}
end

-- Process each expired position
for _, position_id in ipairs(expired) do
    -- Remove from heartbeat tracking
    redis.call('ZREM', KEYS[1], position_id)
    
    -- Remove from positions sorted set
    redis.call('ZREM', KEYS[2], position_id)
    
    -- Update position status
    redis.call('HSET', 'position:' .. position_id, 'status', 'expired')
end

return expired
