package scripting_test

import (
	"testing"

	"github.com/keyhive/keyhive/resp"
	"github.com/keyhive/keyhive/scripting"
)

// replyHost answers every redis.call with a fixed raw reply, for RESP3 reply
// types no command can be made to produce from a script.
type replyHost string

func (r replyHost) Call(args [][]byte, resp3 bool, dst []byte) []byte { return append(dst, r...) }

func run(t *testing.T, e *scripting.Engine, body string, host scripting.Host, proto int) string {
	t.Helper()
	sha, err := e.LoadScript([]byte(body))
	if err != nil {
		return "-" + err.Error() + "\r\n"
	}
	s, _ := e.Script(sha)
	w := &resp.Writer{Proto: proto}
	e.Run(s, nil, nil, host, w)
	return string(w.B)
}

// Expected values follow Redis's documented RESP3-to-Lua conversions.
func TestRESP3ReplyConversion(t *testing.T) {
	e := scripting.NewEngine()
	for _, c := range []struct{ reply, script, want string }{
		{"#t\r\n", "return type(redis.call('x'))", "$7\r\nboolean\r\n"},
		{"#f\r\n", "return redis.call('x') == false", ":1\r\n"},
		{"(123456789012345678901234567890\r\n", "return redis.call('x').big_number", "$30\r\n123456789012345678901234567890\r\n"},
		{"=15\r\ntxt:hello world\r\n", "local v = redis.call('x').verbatim_string return v.format .. '|' .. v.string", "$15\r\ntxt|hello world\r\n"},
		{"_\r\n", "return redis.call('x') == nil", ":1\r\n"},
		{",3.5\r\n", "return redis.call('x').double * 2", ":7\r\n"},
		{"|1\r\n+key\r\n+val\r\n:5\r\n", "return redis.call('x')", ":5\r\n"},
		{"!5\r\nERR x\r\n", "return redis.pcall('x').err", "$5\r\nERR x\r\n"},
	} {
		if got := run(t, e, "redis.setresp(3) "+c.script, replyHost(c.reply), 2); got != c.want {
			t.Errorf("%q on %q: got %q, want %q", c.script, c.reply, got, c.want)
		}
	}
}

func TestLuaToRESP3(t *testing.T) {
	e := scripting.NewEngine()
	for _, c := range []struct {
		script string
		proto  int
		want   string
	}{
		{"return {big_number='123'}", 3, "(123\r\n"},
		{"return {big_number='123'}", 2, "$3\r\n123\r\n"},
		{"return {verbatim_string={format='txt', string='hi'}}", 3, "=6\r\ntxt:hi\r\n"},
		{"return {double=0.5}", 3, ",0.5\r\n"},
		{"return false", 3, "_\r\n"},
		{"redis.setresp(3) return false", 3, "#f\r\n"},
		{"redis.setresp(3) return false", 2, ":0\r\n"},
	} {
		if got := run(t, e, c.script, replyHost(""), c.proto); got != c.want {
			t.Errorf("%q (RESP%d): got %q, want %q", c.script, c.proto, got, c.want)
		}
	}
}

func TestErrorCounted(t *testing.T) {
	e := scripting.NewEngine()
	host := replyHost("-ERR inner\r\n")
	for body, want := range map[string]bool{
		"return redis.call('x')":        true,
		"return redis.pcall('x')":       true,
		"return {err='mine'}":           false,
		"error('boom')":                 false,
		"return 1":                      false,
		"return redis.error_reply('x')": false,
	} {
		run(t, e, body, host, 2)
		if got := e.ErrorCounted(); got != want {
			t.Errorf("%q: ErrorCounted() = %v, want %v", body, got, want)
		}
	}
}
