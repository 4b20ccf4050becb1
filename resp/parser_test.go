package resp

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// outcome is what parsing a byte stream produced: the commands, then either
// an error or the unconsumed bytes waiting for more data.
type outcome struct {
	cmds    [][]string
	err     string
	pending int
}

func (o outcome) String() string {
	return fmt.Sprintf("cmds=%q err=%q pending=%d", o.cmds, o.err, o.pending)
}

func argStrings(args [][]byte) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = string(a)
	}
	return out
}

// feed parses the chunks in order the way a connection does: each chunk is
// appended to the buffer and every complete command in it is parsed. Empty
// commands (blank inline lines, *0, *-1) are recorded as empty commands.
func feed(p *Parser, chunks ...[]byte) outcome {
	var o outcome
	var buf []byte
	r := 0
	for _, chunk := range chunks {
		buf = append(buf, chunk...)
		for r < len(buf) {
			n, err := p.Parse(buf[r:])
			if err != nil {
				o.err = err.Error()
				return o
			}
			if n == 0 {
				break
			}
			r += n
			o.cmds = append(o.cmds, argStrings(p.Args))
		}
	}
	o.pending = len(buf) - r
	return o
}

func newParser() *Parser { return &Parser{MaxBulk: 512 << 20} }

func equalOutcome(a, b outcome) bool {
	if a.err != b.err || a.pending != b.pending || len(a.cmds) != len(b.cmds) {
		return false
	}
	for i := range a.cmds {
		if !slices.Equal(a.cmds[i], b.cmds[i]) {
			return false
		}
	}
	return true
}

func TestProtocolParseCommands(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want [][]string
		rest int
	}{
		{"*1\r\n$4\r\nPING\r\n", [][]string{{"PING"}}, 0},
		{"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n", [][]string{{"SET", "k", "hello"}}, 0},
		{"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", [][]string{{"ECHO", ""}}, 0},
		{"*2\r\n$4\r\nECHO\r\n$4\r\na\r\nb\r\n", [][]string{{"ECHO", "a\r\nb"}}, 0},
		{"*0\r\n", [][]string{{}}, 0},
		{"*-1\r\n", [][]string{{}}, 0},
		{"*-3000000000\r\n", [][]string{{}}, 0},
		{"*1\r\n$4\r\nPINGXY", [][]string{{"PING"}}, 0},      // trailing bytes not checked
		{"*1\rX$4\rYPING\r\n", [][]string{{"PING"}}, 0},      // one byte after '\r' is enough
		{"PING\r\n", [][]string{{"PING"}}, 0},                // inline
		{"PING\n", [][]string{{"PING"}}, 0},                  // inline with a bare \n
		{"PING\r\r\n", [][]string{{"PING"}}, 0},              // one \r is stripped, the other separates
		{"\r\n", [][]string{{}}, 0},                          // empty line
		{"  \t \n", [][]string{{}}, 0},                       // blank line
		{"ECHO \"a b\"\r\n", [][]string{{"ECHO", "a b"}}, 0}, // quotes
		{"PING\r\nPING\r\n*1\r\n$4\r\nPING\r\n", [][]string{{"PING"}, {"PING"}, {"PING"}}, 0},
		{"*1\r\n$4\r\nPI", nil, 10},
		{"*1\r\n$4", nil, 6},
		{"*1\r\n", nil, 4},
		{"*1\r", nil, 3}, // the byte after '\r' is needed
		{"*", nil, 1},
		{"PING", nil, 4},
		{"*1\r\nx", nil, 5}, // the line must be complete before '$' is checked
		{"*2\r\n$1\r\na\r\n", nil, 11},
	} {
		got := feed(newParser(), []byte(tc.in))
		want := outcome{cmds: tc.want, pending: tc.rest}
		if !equalOutcome(got, want) {
			t.Errorf("%q: got %v, want %v", tc.in, got, want)
		}
	}
}

func TestProtocolParseErrors(t *testing.T) {
	long := strings.Repeat("1", InlineMax+10)
	for _, tc := range []struct {
		in, err string
		p       Parser
	}{
		{"*abc\r\n", "invalid multibulk length", Parser{}},
		{"*3000000000\r\n", "invalid multibulk length", Parser{}},
		{"*2147483648\r\n", "invalid multibulk length", Parser{}},
		{"*+1\r\n", "invalid multibulk length", Parser{}},
		{"*01\r\n", "invalid multibulk length", Parser{}},
		{"* 1\r\n", "invalid multibulk length", Parser{}},
		{"*\r\n", "invalid multibulk length", Parser{}},
		{"*1\r\n$abc\r\n", "invalid bulk length", Parser{}},
		{"*1\r\n$-1\r\n", "invalid bulk length", Parser{}},
		{"*1\r\n$\r\n", "invalid bulk length", Parser{}},
		{"*1\r\n$+3\r\n", "invalid bulk length", Parser{}},
		{"*1\r\n$9223372036854775808\r\n", "invalid bulk length", Parser{}},
		{"*1\r\n$1001\r\n", "invalid bulk length", Parser{MaxBulk: 1000}},
		{"*1\r\nx\r\n", "expected '$', got 'x'", Parser{}},
		{"*2\r\n$1\r\na\r\n:1\r\n", "expected '$', got ':'", Parser{}},
		{"*11\r\n", "unauthenticated multibulk length", Parser{Unauthenticated: true}},
		{"*1\r\n$16385\r\n", "unauthenticated bulk length", Parser{Unauthenticated: true}},
		{"*1\r\n$600000000\r\n", "invalid bulk length", Parser{Unauthenticated: true}},
		{"ECHO \"abc\r\n", "unbalanced quotes in request", Parser{}},
		{"ECHO 'abc\r\n", "unbalanced quotes in request", Parser{}},
		{"ECHO \"a\"b\r\n", "unbalanced quotes in request", Parser{}},
		{strings.Repeat("a", InlineMax+1), "too big inline request", Parser{}},
		{"*" + long, "too big mbulk count string", Parser{}},
		{"*1\r\n$" + long, "too big bulk count string", Parser{}},
		{"*1\r\n" + strings.Repeat("x", InlineMax+10), "too big bulk count string", Parser{}},
	} {
		p := tc.p
		if p.MaxBulk == 0 {
			p.MaxBulk = 512 << 20
		}
		got := feed(&p, []byte(tc.in))
		want := "ERR Protocol error: " + tc.err
		if got.err != want {
			t.Errorf("%.40q: got %v, want error %q", tc.in, got, want)
		}
	}
	// Within the limits.
	for _, tc := range []struct {
		in string
		p  Parser
	}{
		{"*10\r\n", Parser{Unauthenticated: true, MaxBulk: 100}},
		{"*1\r\n$16384\r\n", Parser{Unauthenticated: true, MaxBulk: 1 << 20}},
		{"*1\r\n$1000\r\n", Parser{MaxBulk: 1000}},
		{strings.Repeat("a", InlineMax), Parser{}},
		{"*" + long[:InlineMax-1], Parser{}},
	} {
		p := tc.p
		if got := feed(&p, []byte(tc.in)); got.err != "" || got.pending != len(tc.in) {
			t.Errorf("%.40q: got %v, want it waiting for more", tc.in, got)
		}
	}
}

// A stream of varied commands, parsed whole, byte by byte and in every
// two-piece split, gives the same commands.
func TestProtocolParseIncremental(t *testing.T) {
	stream := []byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$10\r\n0123456789\r\n" +
		"GET k\r\n" +
		"\r\n" +
		"*0\r\n" +
		"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n" +
		"ECHO \"a b\" 'c d' e\\x41\r\n" +
		"*-1\r\n" +
		"*2\r\n$4\r\nECHO\r\n$6\r\n\r\n\r\n\r\n\r\n" +
		"PING\n" +
		"*1\r\n$4\r\nPING\r\n")
	whole := feed(newParser(), stream)
	if whole.err != "" || whole.pending != 0 || len(whole.cmds) != 10 {
		t.Fatalf("whole: %v", whole)
	}
	var chunks [][]byte
	for i := range stream {
		chunks = append(chunks, stream[i:i+1])
	}
	if got := feed(newParser(), chunks...); !equalOutcome(got, whole) {
		t.Errorf("byte by byte: %v\nwant %v", got, whole)
	}
	for i := range stream {
		if got := feed(newParser(), stream[:i], stream[i:]); !equalOutcome(got, whole) {
			t.Errorf("split at %d: %v\nwant %v", i, got, whole)
		}
	}
	// Errors are found the same way byte by byte.
	for _, bad := range []string{"*1\r\n$4\r\nPING\r\n*abc\r\n", "PING\r\n*1\r\nxy\r\n", "ECHO \"a\r\n", "*1\r\n$-2\r\n"} {
		whole := feed(newParser(), []byte(bad))
		var chunks [][]byte
		for i := range len(bad) {
			chunks = append(chunks, []byte(bad[i:i+1]))
		}
		if got := feed(newParser(), chunks...); !equalOutcome(got, whole) || whole.err == "" {
			t.Errorf("%q byte by byte: %v, whole %v", bad, got, whole)
		}
	}
}

func TestProtocolParseNeed(t *testing.T) {
	p := newParser()
	buf := []byte("*2\r\n$3\r\nGET\r\n$100\r\nabc")
	n, err := p.Parse(buf)
	if n != 0 || err != nil {
		t.Fatalf("Parse = %d, %v", n, err)
	}
	if want := len("*2\r\n$3\r\nGET\r\n$100\r\n") + 102; p.Need() != want {
		t.Errorf("Need = %d, want %d", p.Need(), want)
	}
	// The caller may move the buffer between calls: positions are relative.
	moved := append(append([]byte("junk"), buf...), bytes.Repeat([]byte("v"), 97)...)
	moved = append(moved, "\r\n"...)
	n, err = p.Parse(moved[4:])
	if err != nil || n != len(moved)-4 {
		t.Fatalf("Parse after move = %d, %v", n, err)
	}
	if got := argStrings(p.Args); got[0] != "GET" || got[1] != "abc"+strings.Repeat("v", 97) {
		t.Errorf("Args = %q", got)
	}
	if p.Need() != 0 {
		t.Errorf("Need after a complete command = %d", p.Need())
	}
	// Reset drops a command in progress.
	p.Parse([]byte("*2\r\n$3\r\nGET\r\n"))
	p.Reset()
	n, err = p.Parse([]byte("PING\r\n"))
	if err != nil || n != 6 || len(p.Args) != 1 || string(p.Args[0]) != "PING" {
		t.Errorf("after Reset: %d %v %q", n, err, p.Args)
	}
	// A huge announced count does not preallocate.
	p.Parse([]byte("*2147483647\r\n"))
	if cap(p.spans) > 2*preallocatedArgsCap {
		t.Errorf("spans capacity %d for an announced count", cap(p.spans))
	}
}

func TestInlineSplitArgs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string // nil: unbalanced quotes
	}{
		{"", []string{}},
		{"   \t ", []string{}},
		{"a", []string{"a"}},
		{" a  b\tc ", []string{"a", "b", "c"}},
		{"\v\fa", []string{"a"}},         // any isspace() between arguments
		{"a\vb\fc", []string{"a\vb\fc"}}, // but only ' ' \t \r \n end one
		{"a\rb\nc", []string{"a", "b", "c"}},
		{`"a b"`, []string{"a b"}},
		{`""`, []string{""}},
		{`''`, []string{""}},
		{`"a" 'b'`, []string{"a", "b"}},
		{`"\x41\x4a\x7e\x00"`, []string{"AJ~\x00"}},
		{`"\x4"`, []string{"x4"}}, // not two hex digits: \x is x
		{`"\xZZ"`, []string{"xZZ"}},
		{`"\n\r\t\b\a\\\"\q"`, []string{"\n\r\t\b\a\\\"q"}},
		{`'a\'b'`, []string{"a'b"}},
		{`'a\nb\\c'`, []string{`a\nb\\c`}},
		{`'it"s'`, []string{`it"s`}},
		{`"it's"`, []string{"it's"}},
		{`a"b c"`, []string{"ab c"}}, // quotes may start inside a word
		{`ab'c d' e`, []string{"abc d", "e"}},
		{`a""`, []string{"a"}},
		{"\"a\"\t", []string{"a"}},
		{"\"a\"\v", []string{"a"}},
		{"\"a\r\"", []string{"a\r"}},
		{`"abc`, nil},
		{`'abc`, nil},
		{`"abc"def`, nil},
		{`'abc'def`, nil},
		{`"abc\"`, nil},
		{`"a\`, nil},
		{`'abc\'`, nil},
		{`a"b`, nil},
		{`"a""b"`, nil},
	} {
		got, ok := SplitArgs([]byte(tc.in), nil)
		if tc.want == nil {
			if ok {
				t.Errorf("SplitArgs(%q) = %q, want unbalanced quotes", tc.in, got)
			}
			continue
		}
		if !ok || !slices.Equal(argStrings(got), tc.want) {
			t.Errorf("SplitArgs(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
	// Plain words point into the line; quoted ones are copies.
	line := []byte(`plain "quoted"`)
	args, _ := SplitArgs(line, nil)
	line[0], line[7] = 'P', 'Q'
	if string(args[0]) != "Plain" || string(args[1]) != "quoted" {
		t.Errorf("aliasing: %q", args)
	}
}

// quoteArg quotes b so that SplitArgs reads it back, as redis-cli's repr does.
func quoteArg(b []byte) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, c := range b {
		switch c {
		case '\\', '"':
			sb.WriteByte('\\')
			sb.WriteByte(c)
		case '\n':
			sb.WriteString(`\n`)
		case '\r':
			sb.WriteString(`\r`)
		case '\t':
			sb.WriteString(`\t`)
		case '\a':
			sb.WriteString(`\a`)
		case '\b':
			sb.WriteString(`\b`)
		default:
			if c < ' ' || c > '~' {
				fmt.Fprintf(&sb, `\x%02x`, c)
			} else {
				sb.WriteByte(c)
			}
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

func TestInlineSplitArgsRoundTrip(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	args := [][]byte{all, {}, []byte("plain"), []byte(`"'\`), []byte(" a b ")}
	var parts []string
	for _, a := range args {
		parts = append(parts, quoteArg(a))
	}
	got, ok := SplitArgs([]byte(strings.Join(parts, " ")), nil)
	if !ok || len(got) != len(args) {
		t.Fatalf("round trip: %q %v", got, ok)
	}
	for i := range args {
		if !bytes.Equal(got[i], args[i]) {
			t.Errorf("arg %d: %q, want %q", i, got[i], args[i])
		}
	}
}
