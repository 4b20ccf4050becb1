package scripting

import (
	"bytes"
	"math"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/resp"
)

// boxedInts holds the integers -256..1023 as LValues: boxing a number
// allocates, and scripts deal mostly in small counts.
var boxedInts = func() (v [1280]lua.LValue) {
	for i := range v {
		v[i] = lua.LNumber(i - 256)
	}
	return v
}()

// numberValue is lua.LNumber(f) as an LValue, without allocating for small
// integers (but -0, which must stay negative).
func numberValue(f float64) lua.LValue {
	if i := int(f); float64(i) == f && i >= -256 && i < 1024 && !(i == 0 && math.Signbit(f)) {
		return boxedInts[i+256]
	}
	return lua.LNumber(f)
}

// numberBoxes remembers recently boxed numbers (a boxed number is
// immutable, so it can be shared): scripts see the same timestamps, limits
// and counters run after run.
type numberBoxes [64]lua.LValue

// box is numberValue, reusing a recent box of the same number.
func (b *numberBoxes) box(f float64) lua.LValue {
	if i := int(f); float64(i) == f && i >= -256 && i < 1024 && !(i == 0 && math.Signbit(f)) {
		return boxedInts[i+256]
	}
	bits := math.Float64bits(f)
	slot := &b[(bits^bits>>21^bits>>42)%uint64(len(b))]
	if n, ok := (*slot).(lua.LNumber); ok && math.Float64bits(float64(n)) == bits {
		return *slot
	}
	*slot = lua.LNumber(f)
	return *slot
}

// stringBoxes remembers recently made short strings, as numberBoxes
// numbers: replies such as counters, flags and OK repeat.
type stringBoxes [64]lua.LValue

const maxBoxedString = 32

// box is lua.LString(b) as an LValue, reusing a recent equal one.
func (c *stringBoxes) box(b []byte) lua.LValue {
	if len(b) > maxBoxedString {
		return lua.LString(b)
	}
	h := uint32(2166136261) // FNV-1a
	for _, x := range b {
		h = (h ^ uint32(x)) * 16777619
	}
	slot := &c[h%uint32(len(c))]
	if s, ok := (*slot).(lua.LString); ok && string(s) == string(b) {
		return *slot
	}
	*slot = lua.LString(b)
	return *slot
}

// parseReply converts a command's raw RESP reply into the Lua value Redis
// gives redis.call (redisProtocolToLuaType). isErr reports an error reply.
func parseReply(st *luaState, raw []byte) (v lua.LValue, isErr bool) {
	L := st.L
	p := replyParser{L: L, st: st, b: raw}
	if len(raw) > 0 && (raw[0] == '-' || raw[0] == '!') {
		isErr = true
	}
	v = p.value()
	if p.bad {
		return errorTable(L, "-ERR invalid reply from command"), true
	}
	return v, isErr
}

type replyParser struct {
	L   *lua.LState
	st  *luaState
	b   []byte
	bad bool
}

// line consumes a header line and returns it without its type byte.
func (p *replyParser) line() []byte {
	i := bytes.Index(p.b, []byte("\r\n"))
	if i < 1 {
		p.bad = true
		p.b = nil
		return nil
	}
	s := p.b[1:i]
	p.b = p.b[i+2:]
	return s
}

// count is a header's length or count (-1 for none); malformed, it marks
// the reply bad.
func (p *replyParser) count(b []byte) int {
	n, ok := strnum.ParseInt(b)
	if !ok || n < -1 || n > math.MaxInt32 {
		p.bad = true
		return -1
	}
	return int(n)
}

func (p *replyParser) bulk(n int) []byte {
	if n < 0 || n+2 > len(p.b) {
		p.bad = true
		p.b = nil
		return nil
	}
	s := p.b[:n]
	p.b = p.b[n+2:]
	return s
}

func (p *replyParser) value() lua.LValue {
	if p.bad || len(p.b) == 0 {
		p.bad = true
		return lua.LNil
	}
	L := p.L
	kind := p.b[0]
	text := p.line()
	switch kind {
	case '+':
		t := L.CreateTable(0, 1)
		t.RawSetString("ok", p.st.strings.box(text))
		return t
	case '-':
		t := errorTable(L, "-"+string(text))
		// The command already counted this error in the error statistics.
		t.RawSetString("ignore_error_stats_update", lua.LTrue)
		return t
	case ':':
		n, ok := strnum.ParseInt(text)
		if !ok { // unsigned past 2^63-1, as Redis 8.8's arrays reply indexes
			u, _ := strconv.ParseUint(string(text), 10, 64)
			return p.st.numbers.box(float64(u))
		}
		return p.st.numbers.box(float64(n))
	case '$', '!', '=':
		n := p.count(text)
		if n < 0 {
			return lua.LFalse
		}
		b := p.bulk(n)
		switch kind {
		case '!':
			t := errorTable(L, "-"+string(b))
			t.RawSetString("ignore_error_stats_update", lua.LTrue)
			return t
		case '=':
			format, str, _ := strings.Cut(string(b), ":")
			inner := L.NewTable()
			inner.RawSetString("format", lua.LString(format))
			inner.RawSetString("string", lua.LString(str))
			t := L.NewTable()
			t.RawSetString("verbatim_string", inner)
			return t
		}
		return p.st.strings.box(b)
	case '*', '~', '>':
		n := p.count(text)
		if n < 0 {
			return lua.LFalse
		}
		t := L.NewTable()
		for i := 1; i <= n && !p.bad; i++ {
			if kind == '~' {
				t.RawSet(p.value(), lua.LTrue)
			} else {
				t.RawSetInt(i, p.value())
			}
		}
		if kind == '~' {
			wrap := L.NewTable()
			wrap.RawSetString("set", t)
			return wrap
		}
		return t
	case '%':
		n := p.count(text)
		t := L.NewTable()
		for i := 0; i < n && !p.bad; i++ {
			k := p.value()
			t.RawSet(k, p.value())
		}
		wrap := L.NewTable()
		wrap.RawSetString("map", t)
		return wrap
	case '|':
		n := p.count(text)
		for i := 0; i < 2*n && !p.bad; i++ {
			p.value() // attributes are not passed to scripts
		}
		return p.value()
	case '_':
		return lua.LNil
	case '#':
		return lua.LBool(string(text) == "t")
	case ',':
		f, _ := strconv.ParseFloat(string(text), 64)
		t := L.NewTable()
		t.RawSetString("double", lua.LNumber(f))
		return t
	case '(':
		t := L.NewTable()
		t.RawSetString("big_number", lua.LString(string(text)))
		return t
	}
	p.bad = true
	return lua.LNil
}

// luaStackLimit mirrors the C stack Redis's reply conversion runs on: it
// checks for room for 4 more slots against LUAI_MAXCSTACK (8000) and emits
// "reached lua stack limit" in place of a too deeply nested value. Slots are
// counted as Redis pushes them, so the cut falls at the same depth.
const luaStackLimit = 8000

// replyWriter converts a script's return value to a RESP reply
// (luaReplyToRedisReply).
type replyWriter struct {
	w           *resp.Writer
	scriptResp3 bool
}

func (c *replyWriter) write(v lua.LValue, used int) {
	w := c.w
	if used+4 > luaStackLimit {
		w.Error("ERR reached lua stack limit")
		return
	}
	switch v := v.(type) {
	case lua.LString:
		w.BulkString(string(v))
	case lua.LBool:
		switch {
		case c.scriptResp3:
			w.Bool(bool(v))
		case bool(v):
			w.Int(1)
		default:
			w.Null()
		}
	case lua.LNumber:
		w.Int(toInt64(float64(v)))
	case *lua.LTable:
		c.writeTable(v, used)
	default:
		w.Null()
	}
}

func (c *replyWriter) writeTable(t *lua.LTable, used int) {
	w := c.w
	if s, ok := t.RawGetString("err").(lua.LString); ok {
		w.Error(string(s))
		return
	}
	if s, ok := t.RawGetString("ok").(lua.LString); ok {
		w.Simple(strings.NewReplacer("\r", " ", "\n", " ").Replace(string(s)))
		return
	}
	if f, ok := t.RawGetString("double").(lua.LNumber); ok {
		w.Double(float64(f))
		return
	}
	if s, ok := t.RawGetString("big_number").(lua.LString); ok {
		big := strings.NewReplacer("\r", " ", "\n", " ").Replace(string(s))
		if w.Proto >= 3 {
			w.B = append(w.B, '(')
			w.B = append(w.B, big...)
			w.B = append(w.B, '\r', '\n')
		} else {
			w.BulkString(big)
		}
		return
	}
	if vt, ok := t.RawGetString("verbatim_string").(*lua.LTable); ok {
		format, fok := vt.RawGetString("format").(lua.LString)
		str, sok := vt.RawGetString("string").(lua.LString)
		if fok && sok {
			// Redis copies exactly three bytes of the format.
			f := []byte(string(format) + "\x00\x00\x00")[:3]
			w.Verbatim(string(f), string(str))
			return
		}
	}
	if m, ok := t.RawGetString("map").(*lua.LTable); ok {
		n := 0
		m.ForEach(func(lua.LValue, lua.LValue) { n++ })
		w.Map(n)
		for k, v := m.Next(lua.LNil); k != lua.LNil; k, v = m.Next(k) {
			c.write(k, used+4)
			c.write(v, used+3)
		}
		return
	}
	if set, ok := t.RawGetString("set").(*lua.LTable); ok {
		n := 0
		set.ForEach(func(lua.LValue, lua.LValue) { n++ })
		w.Set(n)
		for k, _ := set.Next(lua.LNil); k != lua.LNil; k, _ = set.Next(k) {
			c.write(k, used+3)
		}
		return
	}
	n := 0
	for t.RawGetInt(n+1) != lua.LNil {
		n++
	}
	w.Array(n)
	for i := 1; i <= n; i++ {
		c.write(t.RawGetInt(i), used+1)
	}
}
