package cmdspec

import (
	"errors"
	"strconv"
	"strings"
)

// Arg is one argument of a command as COMMAND DOCS describes it.
type Arg struct {
	Name string
	// Type is string, integer, double, key, pattern, unix-time,
	// pure-token, oneof or block.
	Type            string
	KeySpecIndex    int // for a key; -1 otherwise
	Token           string
	Optional        bool
	Multiple        bool
	MultipleToken   bool
	DeprecatedSince string
	Args            []Arg // a oneof's choices, a block's parts
}

// Flags lists COMMAND DOCS's argument flags.
func (a *Arg) Flags() []string {
	var f []string
	if a.Optional {
		f = append(f, "optional")
	}
	if a.Multiple {
		f = append(f, "multiple")
	}
	if a.MultipleToken {
		f = append(f, "multiple_token")
	}
	return f
}

// ParseArgs reads the argument grammar (see the package doc).
func ParseArgs(text string) ([]Arg, error) {
	p := &argParser{s: text}
	args, err := p.items(0)
	if err == nil && p.i < len(p.s) {
		err = p.fail("unexpected " + string(p.s[p.i]))
	}
	return args, err
}

type argParser struct {
	s string
	i int
}

func (p *argParser) fail(msg string) error {
	return errors.New("arguments at " + strconv.Itoa(p.i) + ": " + msg + " in " + p.s)
}

func (p *argParser) skipSpace() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

// items reads items up to the closing character end (0: the end of text);
// a oneof's items are separated by '|'.
func (p *argParser) items(end byte) ([]Arg, error) {
	var args []Arg
	for {
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] == end || p.s[p.i] == '|' {
			return args, nil
		}
		a, err := p.item()
		if err != nil {
			return nil, err
		}
		args = append(args, a)
	}
}

func (p *argParser) item() (Arg, error) {
	if p.s[p.i] == '[' {
		p.i++
		a, err := p.item()
		if err != nil {
			return a, err
		}
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != ']' {
			return a, p.fail("missing ]")
		}
		p.i++
		a.Optional = true
		return a, p.suffix(&a)
	}
	a := Arg{KeySpecIndex: -1}
	word, quoted, err := p.word()
	if err != nil {
		return a, err
	}
	if p.i < len(p.s) && p.s[p.i] == '=' { // TOKEN=...
		p.i++
		a.Token = word
		if word, _, err = p.word(); err != nil {
			return a, err
		}
	} else if p.i >= len(p.s) || p.s[p.i] != ':' { // a bare pure token
		if quoted {
			return a, p.fail("a quoted token needs =name")
		}
		a.Token, word = word, strings.ToLower(word)
	}
	a.Name = word
	a.Type = "pure-token"
	if p.i < len(p.s) && p.s[p.i] == ':' {
		p.i++
		if err := p.typ(&a); err != nil {
			return a, err
		}
	}
	return a, p.suffix(&a)
}

func (p *argParser) typ(a *Arg) error {
	if p.i < len(p.s) && (p.s[p.i] == '<' || p.s[p.i] == '{') {
		end := byte('>')
		a.Type = "oneof"
		if p.s[p.i] == '{' {
			end, a.Type = '}', "block"
		}
		p.i++
		for {
			parts, err := p.items(end)
			if err != nil {
				return err
			}
			if p.i >= len(p.s) {
				return p.fail("missing " + string(end))
			}
			a.Args = append(a.Args, parts...)
			if p.s[p.i] == end {
				p.i++
				return nil
			}
			if end == '}' {
				return p.fail("| in a block")
			}
			p.i++ // '|'
		}
	}
	start := p.i
	for p.i < len(p.s) && isWordChar(p.s[p.i]) {
		p.i++
	}
	a.Type = p.s[start:p.i]
	if p.i < len(p.s) && p.s[p.i] == '#' { // a key spec index: keys, and patterns naming keys
		p.i++
		start = p.i
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		a.KeySpecIndex, _ = strconv.Atoi(p.s[start:p.i])
	} else if a.Type == "key" {
		return p.fail("a key needs #index")
	}
	switch a.Type {
	case "string", "integer", "double", "key", "pattern", "unix-time":
		return nil
	}
	return p.fail("unknown type " + a.Type)
}

func (p *argParser) suffix(a *Arg) error {
	if strings.HasPrefix(p.s[p.i:], "...") {
		p.i += 3
		a.Multiple = true
		if p.i < len(p.s) && p.s[p.i] == '*' {
			p.i++
			a.MultipleToken = true
		}
	}
	if strings.HasPrefix(p.s[p.i:], "(deprecated ") {
		end := strings.IndexByte(p.s[p.i:], ')')
		if end < 0 {
			return p.fail("missing )")
		}
		a.DeprecatedSince = p.s[p.i+len("(deprecated ") : p.i+end]
		p.i += end + 1
	}
	return nil
}

func isWordChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_'
}

// word reads a name or token: plain word characters, or double quoted.
func (p *argParser) word() (string, bool, error) {
	if p.i < len(p.s) && p.s[p.i] == '"' {
		end := strings.IndexByte(p.s[p.i+1:], '"')
		if end < 0 {
			return "", true, p.fail("missing \"")
		}
		w := p.s[p.i+1 : p.i+1+end]
		p.i += end + 2
		return w, true, nil
	}
	start := p.i
	for p.i < len(p.s) && isWordChar(p.s[p.i]) {
		p.i++
	}
	if start == p.i {
		return "", false, p.fail("expected a name")
	}
	return p.s[start:p.i], false, nil
}

// FormatArgs writes arguments in the grammar ParseArgs reads.
func FormatArgs(args []Arg) string {
	var b strings.Builder
	formatItems(&b, args, " ")
	return b.String()
}

func formatItems(b *strings.Builder, args []Arg, sep string) {
	for i := range args {
		if i > 0 {
			b.WriteString(sep)
		}
		formatArg(b, &args[i])
	}
}

func formatWord(b *strings.Builder, w string) {
	plain := w != ""
	for i := 0; i < len(w); i++ {
		plain = plain && isWordChar(w[i])
	}
	if plain {
		b.WriteString(w)
	} else {
		b.WriteString(strconv.Quote(w))
	}
}

func formatArg(b *strings.Builder, a *Arg) {
	if a.Optional {
		b.WriteByte('[')
	}
	if a.Type == "pure-token" && strings.ToLower(a.Token) == a.Name && a.Token != "" && isPlain(a.Token) {
		b.WriteString(a.Token)
	} else {
		if a.Token != "" || a.Type == "pure-token" { // MIGRATE's "" is a token
			formatWord(b, a.Token)
			b.WriteByte('=')
		}
		formatWord(b, a.Name)
		switch a.Type {
		case "pure-token":
		case "oneof":
			b.WriteString(":<")
			formatItems(b, a.Args, "|")
			b.WriteByte('>')
		case "block":
			b.WriteString(":{")
			formatItems(b, a.Args, " ")
			b.WriteByte('}')
		default:
			b.WriteString(":" + a.Type)
			if a.KeySpecIndex >= 0 {
				b.WriteString("#" + strconv.Itoa(a.KeySpecIndex))
			}
		}
	}
	if a.Optional {
		b.WriteByte(']')
	}
	if a.Multiple {
		b.WriteString("...")
		if a.MultipleToken {
			b.WriteByte('*')
		}
	}
	if a.DeprecatedSince != "" {
		b.WriteString("(deprecated " + a.DeprecatedSince + ")")
	}
}

func isPlain(w string) bool {
	for i := 0; i < len(w); i++ {
		if !isWordChar(w[i]) {
			return false
		}
	}
	return true
}
