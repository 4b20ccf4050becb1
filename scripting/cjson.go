package scripting

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	lua "github.com/yuin/gopher-lua"
)

// jsonNull is cjson.null, a light userdata NULL in Redis ("userdata: (nil)").
var jsonNull = &lua.LUserData{Metatable: lua.LNil}

// jsonConfig is one cjson instance's settings (cjson.new makes another),
// with lua-cjson 2.1.0's defaults.
type jsonConfig struct {
	sparseConvert  bool
	sparseRatio    int64
	sparseSafe     int64
	encodeMaxDepth int64
	decodeMaxDepth int64
	precision      int64
	keepBuffer     bool
	encodeInvalid  int // 0 off, 1 on, 2 "null"
	decodeInvalid  bool
}

func openCjson(L *lua.LState) *lua.LTable {
	cfg := &jsonConfig{sparseRatio: 2, sparseSafe: 10, encodeMaxDepth: 1000, decodeMaxDepth: 1000, precision: 14, keepBuffer: true, decodeInvalid: true}
	t := L.NewTable()
	fns := map[string]lua.LGFunction{
		"encode": cfg.encode,
		"decode": cfg.decode,
		"new":    func(L *lua.LState) int { L.Push(openCjson(L)); return 1 },
		"encode_sparse_array": func(L *lua.LState) int {
			jsonArgCount(L, 3, "encode_sparse_array")
			cfg.sparseConvert = jsonBoolOption(L, 1, "encode_sparse_array", cfg.sparseConvert)
			cfg.sparseRatio = jsonIntOption(L, 2, "encode_sparse_array", cfg.sparseRatio, 0, math.MaxInt32)
			cfg.sparseSafe = jsonIntOption(L, 3, "encode_sparse_array", cfg.sparseSafe, 0, math.MaxInt32)
			L.Push(lua.LBool(cfg.sparseConvert))
			L.Push(lua.LNumber(cfg.sparseRatio))
			L.Push(lua.LNumber(cfg.sparseSafe))
			return 3
		},
		"encode_max_depth": func(L *lua.LState) int {
			jsonArgCount(L, 1, "encode_max_depth")
			cfg.encodeMaxDepth = jsonIntOption(L, 1, "encode_max_depth", cfg.encodeMaxDepth, 1, math.MaxInt32)
			L.Push(lua.LNumber(cfg.encodeMaxDepth))
			return 1
		},
		"decode_max_depth": func(L *lua.LState) int {
			jsonArgCount(L, 1, "decode_max_depth")
			cfg.decodeMaxDepth = jsonIntOption(L, 1, "decode_max_depth", cfg.decodeMaxDepth, 1, math.MaxInt32)
			L.Push(lua.LNumber(cfg.decodeMaxDepth))
			return 1
		},
		"encode_number_precision": func(L *lua.LState) int {
			jsonArgCount(L, 1, "encode_number_precision")
			cfg.precision = jsonIntOption(L, 1, "encode_number_precision", cfg.precision, 1, 14)
			L.Push(lua.LNumber(cfg.precision))
			return 1
		},
		"encode_keep_buffer": func(L *lua.LState) int {
			jsonArgCount(L, 1, "encode_keep_buffer")
			cfg.keepBuffer = jsonBoolOption(L, 1, "encode_keep_buffer", cfg.keepBuffer)
			L.Push(lua.LBool(cfg.keepBuffer))
			return 1
		},
		"encode_invalid_numbers": func(L *lua.LState) int {
			jsonArgCount(L, 1, "encode_invalid_numbers")
			cfg.encodeInvalid = jsonEnumOption(L, 1, "encode_invalid_numbers", cfg.encodeInvalid, []string{"off", "on", "null"})
			if cfg.encodeInvalid == 2 {
				L.Push(lua.LString("null"))
			} else {
				L.Push(lua.LBool(cfg.encodeInvalid == 1))
			}
			return 1
		},
		"decode_invalid_numbers": func(L *lua.LState) int {
			jsonArgCount(L, 1, "decode_invalid_numbers")
			cfg.decodeInvalid = jsonBoolOption(L, 1, "decode_invalid_numbers", cfg.decodeInvalid)
			L.Push(lua.LBool(cfg.decodeInvalid))
			return 1
		},
	}
	for name, fn := range fns {
		t.RawSetString(name, L.NewFunction(fn))
	}
	t.RawSetString("null", jsonNull)
	t.RawSetString("_NAME", lua.LString("cjson"))
	t.RawSetString("_VERSION", lua.LString("2.1.0"))
	return t
}

func jsonArgCount(L *lua.LState, max int, fname string) {
	if L.GetTop() > max {
		argError(L, max+1, fname, "found too many arguments")
	}
}

// jsonEnumOption is json_enum_option: true/false or one of the names.
func jsonEnumOption(L *lua.LState, n int, fname string, cur int, names []string) int {
	switch v := L.Get(n).(type) {
	case *lua.LNilType:
		return cur
	case lua.LBool:
		if v {
			return 1
		}
		return 0
	}
	s := checkString(L, n, fname)
	for i, name := range names {
		if s == name {
			return i
		}
	}
	argError(L, n, fname, fmt.Sprintf("invalid option '%s'", s))
	return cur
}

func jsonBoolOption(L *lua.LState, n int, fname string, cur bool) bool {
	c := 0
	if cur {
		c = 1
	}
	return jsonEnumOption(L, n, fname, c, []string{"off", "on"}) == 1
}

func jsonIntOption(L *lua.LState, n int, fname string, cur, lo, hi int64) int64 {
	if L.Get(n) == lua.LNil {
		return cur
	}
	v := checkInt(L, n, fname)
	if v < lo || v > hi {
		argError(L, 1, fname, fmt.Sprintf("expected integer between %d and %d", lo, hi))
	}
	return v
}

// jsonStackDepth approximates where Lua's C stack (LUAI_MAXCSTACK) stops
// lua-cjson's recursion before the configured depth does.
const jsonStackDepth = (luaStackLimit - 10) / 2

func (cfg *jsonConfig) encode(L *lua.LState) int {
	if L.GetTop() != 1 {
		argError(L, 1, "encode", "expected 1 argument")
	}
	e := jsonEncoder{L: L, cfg: cfg}
	e.value(L.Get(1), 0)
	L.Push(lua.LString(e.b))
	return 1
}

type jsonEncoder struct {
	L   *lua.LState
	cfg *jsonConfig
	b   []byte
}

func (e *jsonEncoder) fail(v lua.LValue, reason string) {
	e.L.RaiseError("Cannot serialise %s: %s", v.Type().String(), reason)
}

func (e *jsonEncoder) value(v lua.LValue, depth int) {
	switch v := v.(type) {
	case *lua.LNilType:
		e.b = append(e.b, "null"...)
	case lua.LBool:
		if v {
			e.b = append(e.b, "true"...)
		} else {
			e.b = append(e.b, "false"...)
		}
	case lua.LNumber:
		e.number(float64(v))
	case lua.LString:
		e.str(string(v))
	case *lua.LTable:
		depth++
		if int64(depth) > e.cfg.encodeMaxDepth || depth > jsonStackDepth {
			e.L.RaiseError("Cannot serialise, excessive nesting (%d)", depth)
		}
		if n := e.arrayLength(v); n > 0 {
			e.b = append(e.b, '[')
			for i := 1; i <= n; i++ {
				if i > 1 {
					e.b = append(e.b, ',')
				}
				e.value(v.RawGetInt(i), depth)
			}
			e.b = append(e.b, ']')
			return
		}
		e.b = append(e.b, '{')
		first := true
		for k, val := v.Next(lua.LNil); k != lua.LNil; k, val = v.Next(k) {
			if !first {
				e.b = append(e.b, ',')
			}
			first = false
			switch k := k.(type) {
			case lua.LString:
				e.str(string(k))
			case lua.LNumber:
				e.b = append(e.b, '"')
				e.number(float64(k))
				e.b = append(e.b, '"')
			default:
				e.fail(k, "table key must be a number or string")
			}
			e.b = append(e.b, ':')
			e.value(val, depth)
		}
		e.b = append(e.b, '}')
	case *lua.LUserData:
		if v == jsonNull {
			e.b = append(e.b, "null"...)
			return
		}
		e.fail(v, "type not supported")
	default:
		e.fail(v, "type not supported")
	}
	if len(e.b) > maxStringLen {
		e.L.RaiseError(errNoMemory)
	}
}

// arrayLength is lua_array_length: the largest key when every key is a
// positive integer, -1 otherwise or for arrays judged excessively sparse.
func (e *jsonEncoder) arrayLength(t *lua.LTable) int {
	maxKey, items := 0.0, 0.0
	for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
		n, ok := k.(lua.LNumber)
		if !ok || float64(n) < 1 || math.Floor(float64(n)) != float64(n) {
			return -1
		}
		maxKey = math.Max(maxKey, float64(n))
		items++
	}
	cfg := e.cfg
	if cfg.sparseRatio > 0 && maxKey > items*float64(cfg.sparseRatio) && maxKey > float64(cfg.sparseSafe) {
		if !cfg.sparseConvert {
			e.fail(t, "excessively sparse array")
		}
		return -1
	}
	return int(maxKey)
}

func (e *jsonEncoder) number(f float64) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		switch e.cfg.encodeInvalid {
		case 0:
			e.fail(lua.LNumber(f), "must not be NaN or Inf")
		case 2:
			e.b = append(e.b, "null"...)
			return
		}
		e.b = appendLuaNumber(e.b, f)
		return
	}
	e.b = strconv.AppendFloat(e.b, f, 'g', int(e.cfg.precision), 64)
}

func (e *jsonEncoder) str(s string) {
	e.b = append(e.b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\' || c == '/':
			e.b = append(e.b, '\\', c)
		case c == '\b':
			e.b = append(e.b, `\b`...)
		case c == '\f':
			e.b = append(e.b, `\f`...)
		case c == '\n':
			e.b = append(e.b, `\n`...)
		case c == '\r':
			e.b = append(e.b, `\r`...)
		case c == '\t':
			e.b = append(e.b, `\t`...)
		case c < 0x20 || c == 0x7f:
			e.b = append(e.b, fmt.Sprintf(`\u%04x`, c)...)
		default:
			e.b = append(e.b, c)
		}
	}
	e.b = append(e.b, '"')
}

// JSON decoding: lua-cjson's tokenizer and error texts ("Expected value but
// found T_END at character 1").

type jsonTokenType int

const (
	tObjBegin jsonTokenType = iota
	tObjEnd
	tArrBegin
	tArrEnd
	tString
	tNumber
	tBoolean
	tNull
	tColon
	tComma
	tEnd
	tWhitespace
	tError
)

var jsonTokenNames = []string{"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END", "T_STRING", "T_NUMBER", "T_BOOLEAN", "T_NULL", "T_COLON", "T_COMMA", "T_END", "T_WHITESPACE", "T_ERROR"}

type jsonToken struct {
	typ   jsonTokenType
	index int
	str   string // string value, or the error text of tError
	num   float64
	b     bool
}

type jsonDecoder struct {
	L     *lua.LState
	cfg   *jsonConfig
	data  string
	pos   int
	depth int
}

func (cfg *jsonConfig) decode(L *lua.LState) int {
	if L.GetTop() != 1 {
		argError(L, 1, "decode", "expected 1 argument")
	}
	data := checkString(L, 1, "decode")
	if len(data) >= 2 && (data[0] == 0 || data[1] == 0) {
		L.RaiseError("JSON parser does not support UTF-16 or UTF-32")
	}
	d := jsonDecoder{L: L, cfg: cfg, data: data}
	tok := d.next()
	v := d.value(tok)
	if tok = d.next(); tok.typ != tEnd {
		d.fail("the end", tok)
	}
	L.Push(v)
	return 1
}

func (d *jsonDecoder) fail(expected string, tok jsonToken) {
	found := jsonTokenNames[tok.typ]
	if tok.typ == tError {
		found = tok.str
	}
	d.L.RaiseError("Expected %s but found %s at character %d", expected, found, tok.index+1)
}

func (d *jsonDecoder) descend() {
	d.depth++
	if int64(d.depth) > d.cfg.decodeMaxDepth || d.depth > jsonStackDepth {
		d.L.RaiseError("Found too many nested data structures (%d) at character %d", d.depth, d.pos)
	}
}

func (d *jsonDecoder) value(tok jsonToken) lua.LValue {
	switch tok.typ {
	case tString:
		return lua.LString(tok.str)
	case tNumber:
		return lua.LNumber(tok.num)
	case tBoolean:
		return lua.LBool(tok.b)
	case tNull:
		return jsonNull
	case tObjBegin:
		d.descend()
		t := d.L.NewTable()
		tok = d.next()
		if tok.typ == tObjEnd {
			d.depth--
			return t
		}
		for {
			if tok.typ != tString {
				d.fail("object key string", tok)
			}
			key := tok.str
			if tok = d.next(); tok.typ != tColon {
				d.fail("colon", tok)
			}
			t.RawSetString(key, d.value(d.next()))
			tok = d.next()
			if tok.typ == tObjEnd {
				d.depth--
				return t
			}
			if tok.typ != tComma {
				d.fail("comma or object end", tok)
			}
			tok = d.next()
		}
	case tArrBegin:
		d.descend()
		t := d.L.NewTable()
		tok = d.next()
		if tok.typ == tArrEnd {
			d.depth--
			return t
		}
		for i := 1; ; i++ {
			t.RawSetInt(i, d.value(tok))
			tok = d.next()
			if tok.typ == tArrEnd {
				d.depth--
				return t
			}
			if tok.typ != tComma {
				d.fail("comma or array end", tok)
			}
			tok = d.next()
		}
	}
	d.fail("value", tok)
	return lua.LNil
}

var jsonSingleTokens = map[byte]jsonTokenType{'{': tObjBegin, '}': tObjEnd, '[': tArrBegin, ']': tArrEnd, ':': tColon, ',': tComma}

func (d *jsonDecoder) next() jsonToken {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
			continue
		}
		break
	}
	tok := jsonToken{index: d.pos}
	errTok := func(msg string) jsonToken {
		tok.typ, tok.str, tok.index = tError, msg, d.pos
		return tok
	}
	if d.pos >= len(d.data) || d.data[d.pos] == 0 {
		tok.typ = tEnd
		return tok
	}
	c := d.data[d.pos]
	if typ, ok := jsonSingleTokens[c]; ok {
		d.pos++
		tok.typ = typ
		return tok
	}
	rest := d.data[d.pos:]
	switch {
	case c == '"':
		return d.stringToken(tok)
	case c == '-' || c >= '0' && c <= '9':
		if !d.cfg.decodeInvalid && jsonInvalidNumber(rest) {
			return errTok("invalid number")
		}
		return d.numberToken(tok, errTok)
	case len(rest) >= 4 && rest[:4] == "true":
		d.pos += 4
		tok.typ, tok.b = tBoolean, true
		return tok
	case len(rest) >= 5 && rest[:5] == "false":
		d.pos += 5
		tok.typ = tBoolean
		return tok
	case len(rest) >= 4 && rest[:4] == "null":
		d.pos += 4
		tok.typ = tNull
		return tok
	case d.cfg.decodeInvalid && jsonInvalidNumber(rest):
		return d.numberToken(tok, errTok)
	}
	return errTok("invalid token")
}

// jsonInvalidNumber is json_is_invalid_number: numbers JSON forbids but
// strtod reads (leading +, hex, leading zeros, inf, nan).
func jsonInvalidNumber(s string) bool {
	if s[0] == '+' {
		return true
	}
	if s[0] == '-' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	if s[0] == '0' {
		return len(s) > 1 && (s[1]|0x20 == 'x' || s[1] >= '0' && s[1] <= '9')
	}
	if s[0] <= '9' {
		return false
	}
	if len(s) >= 3 {
		p := string([]byte{s[0] | 0x20, s[1] | 0x20, s[2] | 0x20})
		return p == "inf" || p == "nan"
	}
	return false
}

func (d *jsonDecoder) numberToken(tok jsonToken, errTok func(string) jsonToken) jsonToken {
	f, n := strtod(d.data[d.pos:])
	if n == 0 {
		return errTok("invalid number")
	}
	d.pos += n
	tok.typ, tok.num = tNumber, f
	return tok
}

// strtod parses the longest prefix of s that C's strtod accepts (decimal
// with exponent, hexadecimal, inf/infinity, nan) and returns its length.
func strtod(s string) (float64, int) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] >= '\t' && s[i] <= '\r') {
		i++
	}
	start := i
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	sign := func(f float64) float64 {
		if neg {
			return -f
		}
		return f
	}
	is := func(word string) bool { // case-insensitively, at i
		return len(s)-i >= len(word) && strings.EqualFold(s[i:i+len(word)], word)
	}
	switch {
	case is("infinity"):
		return sign(math.Inf(1)), i + 8
	case is("inf"):
		return sign(math.Inf(1)), i + 3
	case is("nan"):
		return sign(math.NaN()), i + 3
	case is("0x"):
		// A hex float: digits, an optional fraction, an optional binary
		// exponent (p).
		j := i + 2
		var v float64
		digits, scale := 0, 0
		for point := false; j < len(s); j++ {
			if s[j] == '.' && !point {
				point = true
				continue
			}
			d, ok := hexDigit(s[j])
			if !ok {
				break
			}
			v = v*16 + float64(d)
			digits++
			if point {
				scale -= 4
			}
		}
		if digits == 0 {
			return 0, i + 1 // "0" then an x that is not part of the number
		}
		if j < len(s) && (s[j] == 'p' || s[j] == 'P') {
			k, expNeg := j+1, false
			if k < len(s) && (s[k] == '+' || s[k] == '-') {
				expNeg = s[k] == '-'
				k++
			}
			exp, expDigits := 0, 0
			for ; k < len(s) && s[k] >= '0' && s[k] <= '9'; k++ {
				exp = min(exp*10+int(s[k]-'0'), 1<<20)
				expDigits++
			}
			if expDigits > 0 {
				if expNeg {
					exp = -exp
				}
				scale += exp
				j = k
			}
		}
		return sign(math.Ldexp(v, scale)), j
	}
	j := i
	digits := 0
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
		digits++
	}
	if j < len(s) && s[j] == '.' {
		j++
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
			digits++
		}
	}
	if digits == 0 {
		return 0, 0
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '+' || s[k] == '-') {
			k++
		}
		if k < len(s) && s[k] >= '0' && s[k] <= '9' {
			for k < len(s) && s[k] >= '0' && s[k] <= '9' {
				k++
			}
			j = k
		}
	}
	f, err := strconv.ParseFloat(s[start:j], 64)
	if err != nil && !isRangeErr(err) {
		return 0, 0
	}
	return f, j
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func hexDigit(c byte) (int, bool) {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0'), true
	case c|0x20 >= 'a' && c|0x20 <= 'f':
		return int(c|0x20-'a') + 10, true
	}
	return 0, false
}

func (d *jsonDecoder) stringToken(tok jsonToken) jsonToken {
	d.pos++ // opening quote
	var b []byte
	for {
		if d.pos >= len(d.data) {
			tok.typ, tok.str, tok.index = tError, "unexpected end of string", d.pos
			return tok
		}
		c := d.data[d.pos]
		if c == '"' {
			d.pos++
			tok.typ, tok.str = tString, string(b)
			return tok
		}
		if c != '\\' {
			b = append(b, c)
			d.pos++
			continue
		}
		if d.pos+1 >= len(d.data) {
			tok.typ, tok.str, tok.index = tError, "unexpected end of string", d.pos
			return tok
		}
		esc := d.data[d.pos+1]
		switch esc {
		case '"', '\\', '/':
			b = append(b, esc)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, n := decodeUnicodeEscape(d.data[d.pos:])
			if n == 0 {
				tok.typ, tok.str, tok.index = tError, "invalid unicode escape code", d.pos
				return tok
			}
			b = utf8.AppendRune(b, r)
			d.pos += n
			continue
		default:
			tok.typ, tok.str, tok.index = tError, "invalid escape code", d.pos
			return tok
		}
		d.pos += 2
	}
}

// decodeUnicodeEscape reads \uXXXX, or a surrogate pair \uD8XX\uDCXX, and
// returns the code point and the bytes consumed (0 when invalid).
func decodeUnicodeEscape(s string) (rune, int) {
	hex4 := func(s string) (rune, bool) {
		if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
			return 0, false
		}
		v, err := strconv.ParseUint(s[2:6], 16, 16)
		return rune(v), err == nil
	}
	r, ok := hex4(s)
	switch {
	case !ok:
		return 0, 0
	case r >= 0xDC00 && r <= 0xDFFF:
		return 0, 0
	case r >= 0xD800 && r <= 0xDBFF:
		lo, ok := hex4(s[6:])
		if !ok || lo < 0xDC00 || lo > 0xDFFF {
			return 0, 0
		}
		return 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00), 12
	}
	return r, 6
}
