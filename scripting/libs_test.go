package scripting_test

import "testing"

func TestLibraryContents(t *testing.T) {
	h := newHarness(t)
	for _, lib := range []string{"struct", "cjson", "cmsgpack", "bit"} {
		h.eval("local t={} for k,v in pairs("+lib+") do t[#t+1]=k end table.sort(t) return t", nil)
	}
	h.evalAll(
		"return {cjson._NAME, cjson._VERSION, cmsgpack._NAME, cmsgpack._VERSION, cmsgpack._COPYRIGHT, cmsgpack._DESCRIPTION}",
		"return {tostring(cjson.null), type(cjson.null)}",
	)
}

func TestCjson(t *testing.T) {
	h := newHarness(t)
	h.evalAll(
		"return cjson.encode({1, 2, nil, 4})",
		"return cjson.encode({})",
		"return cjson.encode({a=1})",
		"return cjson.encode({[1]='x', [2]={true, false, cjson.null}})",
		"return cjson.encode('a/b\\1\\127\\128\"\\\\\\n\\r\\t\\b\\f')",
		"return cjson.encode(0.1)",
		"return cjson.encode({1e100, -0.0, 3, 1/3, 123456789012345678})",
		"return cjson.encode(1/0)",
		"return cjson.encode(0/0)",
		"return cjson.encode(nil)",
		"return cjson.encode()",
		"return cjson.encode(1, 2)",
		"return cjson.encode(function() end)",
		"return cjson.encode({[true]=1})",
		"return cjson.encode({[1.5]=1})",
		"return cjson.encode({[10]=1})",
		"return cjson.encode({[3]=1, [1]=2})",
		"local t = {} t[1] = t return cjson.encode(t)",
		"return cjson.encode_max_depth()",
		"cjson.encode_max_depth(2) return cjson.encode({{{1}}})",
		"return cjson.encode_max_depth(0)",
		"return cjson.encode_number_precision(20)",
		"cjson.encode_number_precision(3) return cjson.encode(math.pi)",
		"return {cjson.encode_sparse_array()}",
		"cjson.encode_sparse_array(true) return cjson.encode({[10]=1})",
		"return cjson.encode_keep_buffer('x')",
		"return cjson.encode_keep_buffer('off')",
		"return cjson.encode_invalid_numbers('null')",
		"cjson.encode_invalid_numbers('null') return cjson.encode(1/0)",
		"cjson.encode_invalid_numbers(true) return cjson.encode({1/0, -1/0})",
		"return cjson.decode_invalid_numbers(false)",
		"return cjson.encode_max_depth(1, 2)",
		"local c = cjson.new() c.encode_number_precision(2) return {c.encode(math.pi), cjson.encode(math.pi)}",
		"return cjson.decode('[1,2,3]')",
		"return cjson.decode('{\"a\":[1,{\"b\":\"c\"}]}').a[2].b",
		"return cjson.decode('\"\\\\u00e9\\\\ud83d\\\\ude00\\\\n\\\\/\"')",
		"return cjson.decode('  123.5e2 ')",
		"return tostring(cjson.decode('-0'))",
		"return cjson.decode('[true,false,null]')[3] == cjson.null",
		"return cjson.decode('')",
		"return cjson.decode('[1,2')",
		"return cjson.decode('[1,2,]')",
		"return cjson.decode('{\"a\" 1}')",
		"return cjson.decode('{\"a\":1,}')",
		"return cjson.decode('{1:2}')",
		"return cjson.decode('[1] x')",
		"return cjson.decode('nul')",
		"return cjson.decode('\"abc')",
		"return cjson.decode('\"\\\\x\"')",
		"return cjson.decode('\"\\\\ud800\"')",
		"return cjson.decode('0x10')",
		"return cjson.decode('[01]')",
		"return tostring(cjson.decode('[Infinity, nan, -inf]')[1])",
		"return cjson.decode('+1')",
		"return cjson.decode('1e')",
		"return cjson.decode('.5')",
		"return cjson.decode('\\0[1]')",
		"return cjson.decode({})",
		"return cjson.decode()",
		"return cjson.decode(string.rep('[', 1001) .. string.rep(']', 1001))",
		"return #cjson.decode(string.rep('[', 1000) .. string.rep(']', 1000))",
		"cjson.decode_max_depth(3) return cjson.decode('[[[[1]]]]')",
		"cjson.decode_invalid_numbers(false) return cjson.decode('0x10')",
		"return cjson.encode(cjson.decode('{\"k\":[1.5,\"s\",null,true]}'))",
	)
}

func TestCmsgpack(t *testing.T) {
	h := newHarness(t)
	h.evalAll(
		"return cmsgpack.pack(1, -1, 127, 128, 255, 256, 65535, 65536, 4294967295, 4294967296, -32, -33, -128, -129, -32768, -32769, -2147483648, -2147483649)",
		"return cmsgpack.pack(0.5, 0.1, 1/0, -1/0, 1e300, 2^63, -2^63)",
		"return cmsgpack.pack('', 'abc', string.rep('x', 31), string.rep('x', 32), string.rep('x', 255), string.rep('x', 256), string.rep('x', 65536))",
		"return cmsgpack.pack(nil, true, false)",
		"return cmsgpack.pack({}, {1, 2, 3}, {a=1}, {[1]=1, [3]=3}, {1, nil, 3})",
		"local t = {} for i = 1, 16 do t[i] = i end return cmsgpack.pack(t)",
		"local t = {} for i = 1, 70000 do t[i] = 1 end return #cmsgpack.pack(t)",
		"local t = {} for i = 1, 20 do t[i] = {} end local n = t[1] for i = 2, 20 do n[1] = t[i] n = t[i] end return cmsgpack.pack(t[1])",
		"return cmsgpack.pack(function() end)",
		"return cmsgpack.pack()",
		"return {cmsgpack.unpack(cmsgpack.pack(1, 'a', {1, 2}, true))}",
		"return cmsgpack.unpack(cmsgpack.pack({k='v'})).k",
		"return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3))}",
		"return {cmsgpack.unpack_one(cmsgpack.pack(1, 2, 3), 2)}",
		"return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 2)}",
		"return {cmsgpack.unpack_limit(cmsgpack.pack(1, 2, 3), 5, 1)}",
		"return {cmsgpack.unpack_limit('x', -1)}",
		"return {cmsgpack.unpack_one('x', 5)}",
		"return {cmsgpack.unpack('\\205\\1')}",
		"return {cmsgpack.unpack('\\193')}",
		"return {cmsgpack.unpack('\\220\\255\\255')}",
		"return {cmsgpack.unpack('\\221\\255\\255\\255\\255')}",
		"return {cmsgpack.unpack('\\129\\192\\1')}",
		"return {cmsgpack.unpack('\\196\\3abc')}",
		"return {cmsgpack.unpack('\\199\\1\\1a')}",
		"return tostring(cmsgpack.unpack('\\203\\127\\248\\0\\0\\0\\0\\0\\1'))",
		"return {cmsgpack.unpack('\\207\\255\\255\\255\\255\\255\\255\\255\\255')}",
		"return {cmsgpack.unpack('\\211\\128\\0\\0\\0\\0\\0\\0\\0')}",
		"return {cmsgpack.unpack('')}",
		"return cmsgpack.unpack()",
	)
}

func TestBit(t *testing.T) {
	h := newHarness(t)
	h.evalAll(
		"return {bit.tobit(0xffffffff), bit.tobit(2^32 + 5), bit.tobit(-1), bit.tobit(1.5), bit.tobit(2.5), bit.tobit(-1.5)}",
		"return {bit.bnot(0), bit.band(0xff, 0x0f, 0x3), bit.bor(1, 2, 4), bit.bxor(5, 3), bit.band(7)}",
		"return {bit.lshift(1, 31), bit.lshift(1, 32), bit.rshift(-1, 28), bit.arshift(-256, 4), bit.rol(0x12345678, 8), bit.ror(0x12345678, 8)}",
		"return {bit.bswap(0x12345678), bit.tohex(255), bit.tohex(-1, -4), bit.tohex(0x1234, 2), bit.tohex(1, 20), bit.tohex(1, 0)}",
		"return bit.tobit('12')",
		"return bit.tobit('x')",
		"return bit.band(1, {})",
		"return bit.tobit()",
		"return bit.lshift(1)",
		"return bit.tobit(1e20)",
	)
}

func TestStruct(t *testing.T) {
	h := newHarness(t)
	h.evalAll(
		"return struct.pack('>i4<h', 1, -2)",
		"return struct.pack('bBhHlLTiI', -1, 255, -2, 65535, -3, 3, 4, -5, 5)",
		"return struct.pack('i3I7', 0x123456, 2^40)",
		"return struct.pack('!4bi', 1, 2)",
		"return struct.pack('!8bd', 1, 1.5)",
		"return struct.pack('>fd', 1.5, -2.25)",
		"return struct.pack('s', 'abc')",
		"return struct.pack('c5', 'abcdefg')",
		"return struct.pack('c0', 'abc')",
		"return struct.pack('c5', 'ab')",
		"return struct.pack('xbx', 7)",
		"return struct.pack('i33', 1)",
		"return struct.pack('!3i', 1)",
		"return struct.pack('y', 1)",
		"return struct.pack('i')",
		"return struct.pack('i', 'x')",
		"return struct.pack('i', 2^70)",
		"return struct.pack('i16', -1)",
		"return {struct.unpack('>i4<h', struct.pack('>i4<h', 1, -2))}",
		"return {struct.unpack('bBhHlLiI', struct.pack('bBhHlLiI', -1, 255, -2, 65535, -3, 3, -5, 5))}",
		"return {struct.unpack('s', 'abc\\0def')}",
		"return {struct.unpack('s', 'abc')}",
		"return {struct.unpack('c3', 'abcdef', 2)}",
		"return {struct.unpack('bc0', '\\3abcd')}",
		"return {struct.unpack('c0', 'abc')}",
		"return {struct.unpack('i', 'ab')}",
		"return {struct.unpack('i', 'abcd', 0)}",
		"return {struct.unpack('i', 'abcd', 10)}",
		"return {struct.unpack('>f', struct.pack('>f', 0.5))}",
		"return tostring(struct.unpack('d', struct.pack('d', 0.1)))",
		"return {struct.unpack('!4bi', struct.pack('!4bi', 1, 2))}",
		"return {struct.unpack('i16', struct.pack('i16', -1))}",
		"return {struct.unpack('I9', string.rep('\\255', 9))}",
		"return {struct.size('bhi'), struct.size('!4bi'), struct.size('c10d'), struct.size('x')}",
		"return struct.size('s')",
		"return struct.size('c0')",
		"return struct.size('i99999999999')",
		"return struct.size('y')",
	)
}
