package scripting_test

import "testing"

// Lua as Redis 7.0 runs it, where gopher-lua differs from PUC Lua 5.1 or
// Redis's sandbox: the globals' error metatable, collectgarbage, string.char
// and string.dump, and the load-time redis table of functions.
func TestLuaQuirks(t *testing.T) {
	h := newHarness(t)
	for _, proto := range []int{2, 3} {
		h.setProto(proto)
		h.evalAll(
			// getmetatable(_G) is a read-only table holding the __index
			// that raises for unknown globals.
			"return type(getmetatable(_G))",
			"local t={} for k,v in pairs(getmetatable(_G)) do t[#t+1]=k..'='..type(v) end table.sort(t) return t",
			"return getmetatable(_G) == getmetatable(_G)",
			"return getmetatable(getmetatable(_G)) == nil",
			"return rawget(getmetatable(_G), '__index') ~= nil",
			"return type(getmetatable(_G).__newindex)",
			"getmetatable(_G).__index = nil",
			"getmetatable(_G).x = 1",
			"rawset(getmetatable(_G), 'x', 1)",
			"setmetatable(getmetatable(_G), {})",
			"table.insert(getmetatable(_G), 1)",
			"return getmetatable(_G).__index('nosuch')",
			"return getmetatable(_G).__index(_G, 'nosuch')",
			"return getmetatable(_G).__index(_G, 12)",
			"return getmetatable(_G).__index(_G, {})",
			"return getmetatable(redis) == nil",
			"return getmetatable(string) == nil",
			// collectgarbage answers as Lua 5.1's.
			"return type(collectgarbage('count'))",
			"return collectgarbage('count') > 0",
			"return #{collectgarbage('count')}",
			"return collectgarbage()",
			"return collectgarbage('collect')",
			"return collectgarbage('stop')",
			"return collectgarbage('restart')",
			"return type(collectgarbage('step', 100))",
			"return {collectgarbage('setpause', 150), collectgarbage('setpause', 200)}",
			"return {collectgarbage('setstepmul', 300), collectgarbage('setstepmul', 200)}",
			"return collectgarbage('bogus')",
			"return collectgarbage(1)",
			"return collectgarbage({})",
			"return collectgarbage('step', 'x')",
			// string.char checks each code.
			"return string.char(256)",
			"return string.char(-1)",
			"return string.char(1, 256)",
			"return string.char(255, 0, 65)",
			"return string.char('66', 67.9)",
			"return string.char('x')",
			"return string.char()",
			// A huge string.rep fails as Lua does when out of memory.
			"return string.rep('x', 2^31)",
			"return string.rep('x', 2^32 + 3)",
			// string.dump: the header is Lua's; loading it fails, since
			// Redis loads no binary chunk.
			"return string.dump(function() end):sub(1, 41)",
			"local f = function(a)\n return a\nend\nreturn string.dump(f):sub(1, 41)",
			"return type(string.dump(function() return 1 end))",
			"return {loadstring(string.dump(function() return 1 end))}",
			"return string.dump(string.len)",
			"return string.dump(1)",
			// Argument checks that come before the work, with Lua's texts.
			"return string.format('%')",
			"return string.format('%10')",
			"return string.format('%', 1)",
			"return string.format('%5c|%-3c|%c', 256, 65, 66)",
			"return string.format('%c', 256)",
			"return string.format('%d %d', 1)",
			"return table.concat({1, {}, 3})",
			"return table.concat({1, 2, 3}, ',', 2, 5)",
			"return table.concat({1, true})",
			"return select(0, 1)",
			"return select(-3, 1, 2)",
			"return {select(-2, 1, 2, 3)}",
			"return {select(9, 1, 2, 3)}",
			"return select('#', 1, nil, 3)",
			"return select('x', 1)",
			"return select()",
			"return math.max()",
			"return math.min()",
			"return math.max(1, 'x')",
			"return math.min('3', 7, 2)",
			// tonumber reads hex floats as strtod does.
			"return tostring(tonumber('0x1p4'))",
			"return tostring(tonumber('0x1.8p1'))",
			"return tostring(tonumber('0x.8'))",
			"return tostring(tonumber('0x1P-2'))",
			"return tostring(tonumber('0x1p'))",
			"return tostring(tonumber('0x1.'))",
			"return tostring(tonumber('0x.'))",
			"return tostring(tonumber('-0xAp+1'))",
			"return tostring(tonumber('0x1p99999'))",
			"return tostring(tonumber('0x1.8p1x'))",
			"return tostring('0x1p4' + 0)",
		)
	}
}

// While FUNCTION LOAD runs the library's code, redis has only
// register_function, log and the constants: anything else is a
// nonexistent global, as in Redis.
func TestFunctionLoadTimeRedis(t *testing.T) {
	h := newHarness(t)
	h.load("#!lua name=a\nredis.call('ping')", false)
	h.load("#!lua name=a\nreturn redis.pcall", false)
	h.load("#!lua name=a\nredis.setresp(3)", false)
	h.load("#!lua name=a\nredis.x = 1", false)
	h.load("#!lua name=a\nredis.register_function('1-a', function() end)", false)
	h.load("#!lua name=a\nredis.register_function('', function() end)", false)
}
