// Package jsonpath parses and evaluates the paths of the JSON.* commands
// over documents in package jsondoc's stored form, in place.
//
// Two syntaxes: JSONPath, starting with `$` (`.name`, `['name']`, `[0]`,
// `[-1]`, `[start:end:step]`, `*`, unions `[0,'a']`, recursive descent `..`
// and filters `[?(@.price < 10 && @.tags[*] == "x")]` with ==, !=, <, <=,
// >, >=, =~ (a regular expression), &&, || and !); and the legacy paths of
// RedisJSON 1 (`.`, `.a.b`, `a.b`, `["x"]`, `a[0]`), the same steps without
// the `$`, whose commands reply with the first match's scalar.
package jsonpath

import (
	"errors"
	"regexp"
	"strconv"
)

// Path is a parsed path.
type Path struct {
	legacy bool
	steps  []step
}

// step is one `.`/`[...]` of a path: selectors applied to each node (to
// each node and all its descendants after `..`).
type step struct {
	descend bool
	sels    []selector
}

type selectorKind uint8

const (
	selName selectorKind = iota
	selWildcard
	selIndex
	selSlice
	selFilter
)

type selector struct {
	kind             selectorKind
	name             []byte
	index            int
	start, end, step int
	hasStart, hasEnd bool
	filter           *expr
}

// MaxNesting bounds the parentheses and nested filters of a path, so that a
// hostile path cannot exhaust the stack.
const MaxNesting = 64

// ErrSyntax is a path that does not parse.
var ErrSyntax = errors.New("invalid JSONPath")

// IsLegacy reports whether the path is in the legacy syntax (not `$...`).
func (p *Path) IsLegacy() bool { return p.legacy }

// IsRoot reports whether the path names the document itself (`$` or `.`).
func (p *Path) IsRoot() bool { return len(p.steps) == 0 }

// Definite reports whether the path names at most one value: only names and
// single indexes, no wildcard, union, slice, filter or descent.
func (p *Path) Definite() bool {
	for _, s := range p.steps {
		if s.descend || len(s.sels) != 1 || s.sels[0].kind > selIndex || s.sels[0].kind == selWildcard {
			return false
		}
	}
	return true
}

// LastName returns the path's last step's member name and the path of its
// parent, when the last step is one name (what JSON.SET may create).
func (p *Path) LastName() (name []byte, parent *Path, ok bool) {
	if len(p.steps) == 0 {
		return nil, nil, false
	}
	last := p.steps[len(p.steps)-1]
	if last.descend || len(last.sels) != 1 || last.sels[0].kind != selName {
		return nil, nil, false
	}
	return last.sels[0].name, &Path{legacy: p.legacy, steps: p.steps[:len(p.steps)-1]}, true
}

// Parse parses a path of either syntax.
func Parse(text []byte) (*Path, error) {
	ps := pathParser{s: text}
	p := &Path{}
	switch {
	case len(text) > 0 && text[0] == '$':
		ps.pos = 1
	case len(text) == 1 && text[0] == '.':
		return &Path{legacy: true}, nil
	default:
		p.legacy = true
		if len(text) > 0 && text[0] != '.' && text[0] != '[' {
			// a bare first name: `a.b` is `.a.b`
			name, err := ps.name()
			if err != nil {
				return nil, err
			}
			p.steps = append(p.steps, step{sels: []selector{{kind: selName, name: name}}})
		}
	}
	steps, err := ps.steps(p.steps, false)
	if err != nil {
		return nil, err
	}
	if ps.pos != len(text) {
		return nil, ErrSyntax
	}
	p.steps = steps
	return p, nil
}

type pathParser struct {
	s     []byte
	pos   int
	depth int
}

func (ps *pathParser) peek() byte {
	if ps.pos < len(ps.s) {
		return ps.s[ps.pos]
	}
	return 0
}

func (ps *pathParser) skipSpace() {
	for ps.pos < len(ps.s) && (ps.s[ps.pos] == ' ' || ps.s[ps.pos] == '\t') {
		ps.pos++
	}
}

// steps parses `.x`, `..x` and `[...]` steps until something else; inside
// a filter (relative) it stops at an operator or a closing parenthesis.
func (ps *pathParser) steps(out []step, relative bool) ([]step, error) {
	for ps.pos < len(ps.s) {
		c := ps.s[ps.pos]
		switch {
		case c == '.' && ps.pos+1 < len(ps.s) && ps.s[ps.pos+1] == '.':
			ps.pos += 2
			st := step{descend: true}
			var err error
			switch ps.peek() {
			case '[':
				st.sels, err = ps.bracket()
			case '*':
				ps.pos++
				st.sels = []selector{{kind: selWildcard}}
			default:
				var name []byte
				name, err = ps.name()
				st.sels = []selector{{kind: selName, name: name}}
			}
			if err != nil {
				return nil, err
			}
			out = append(out, st)
		case c == '.':
			ps.pos++
			if ps.peek() == '*' {
				ps.pos++
				out = append(out, step{sels: []selector{{kind: selWildcard}}})
				continue
			}
			if ps.peek() == '[' { // `.[0]`, `.["a"]`
				sels, err := ps.bracket()
				if err != nil {
					return nil, err
				}
				out = append(out, step{sels: sels})
				continue
			}
			name, err := ps.name()
			if err != nil {
				return nil, err
			}
			out = append(out, step{sels: []selector{{kind: selName, name: name}}})
		case c == '[':
			sels, err := ps.bracket()
			if err != nil {
				return nil, err
			}
			out = append(out, step{sels: sels})
		default:
			if relative {
				return out, nil
			}
			return nil, ErrSyntax
		}
	}
	return out, nil
}

// isNameByte reports whether c may appear in a dotted member name.
func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c >= 0x80
}

func (ps *pathParser) name() ([]byte, error) {
	start := ps.pos
	for ps.pos < len(ps.s) && isNameByte(ps.s[ps.pos]) {
		ps.pos++
	}
	if ps.pos == start {
		return nil, ErrSyntax
	}
	return ps.s[start:ps.pos], nil
}

// bracket parses `[selector, selector, ...]`.
func (ps *pathParser) bracket() ([]selector, error) {
	ps.pos++ // '['
	var sels []selector
	for {
		ps.skipSpace()
		sel, err := ps.selector()
		if err != nil {
			return nil, err
		}
		sels = append(sels, sel)
		ps.skipSpace()
		switch ps.peek() {
		case ',':
			ps.pos++
			continue
		case ']':
			ps.pos++
			return sels, nil
		}
		return nil, ErrSyntax
	}
}

func (ps *pathParser) selector() (selector, error) {
	switch c := ps.peek(); {
	case c == '*':
		ps.pos++
		return selector{kind: selWildcard}, nil
	case c == '\'' || c == '"':
		s, err := ps.quoted()
		return selector{kind: selName, name: s}, err
	case c == '?':
		ps.pos++
		ps.skipSpace()
		if ps.peek() != '(' {
			return selector{}, ErrSyntax
		}
		ps.pos++
		e, err := ps.expr()
		if err != nil {
			return selector{}, err
		}
		ps.skipSpace()
		if ps.peek() != ')' {
			return selector{}, ErrSyntax
		}
		ps.pos++
		return selector{kind: selFilter, filter: e}, nil
	case c == '-' || c >= '0' && c <= '9' || c == ':':
		return ps.indexOrSlice()
	}
	return selector{}, ErrSyntax
}

func (ps *pathParser) integer() (int, bool, error) {
	ps.skipSpace()
	start := ps.pos
	if ps.peek() == '-' {
		ps.pos++
	}
	for ps.pos < len(ps.s) && ps.s[ps.pos] >= '0' && ps.s[ps.pos] <= '9' {
		ps.pos++
	}
	if ps.pos == start {
		return 0, false, nil
	}
	n, err := strconv.Atoi(string(ps.s[start:ps.pos]))
	if err != nil {
		return 0, false, ErrSyntax
	}
	ps.skipSpace()
	return n, true, nil
}

func (ps *pathParser) indexOrSlice() (selector, error) {
	n, has, err := ps.integer()
	if err != nil {
		return selector{}, err
	}
	if ps.peek() != ':' {
		if !has {
			return selector{}, ErrSyntax
		}
		return selector{kind: selIndex, index: n}, nil
	}
	sel := selector{kind: selSlice, start: n, hasStart: has, step: 1}
	ps.pos++
	if sel.end, sel.hasEnd, err = ps.integer(); err != nil {
		return selector{}, err
	}
	if ps.peek() == ':' {
		ps.pos++
		step, has, err := ps.integer()
		if err != nil {
			return selector{}, err
		}
		if has {
			sel.step = step
		}
	}
	return sel, nil
}

// quoted parses a '...' or "..." string with backslash escapes.
func (ps *pathParser) quoted() ([]byte, error) {
	q := ps.s[ps.pos]
	ps.pos++
	var out []byte
	for ps.pos < len(ps.s) {
		c := ps.s[ps.pos]
		ps.pos++
		switch c {
		case q:
			if out == nil {
				out = []byte{}
			}
			return out, nil
		case '\\':
			if ps.pos >= len(ps.s) {
				return nil, ErrSyntax
			}
			e := ps.s[ps.pos]
			ps.pos++
			switch e {
			case 'n':
				e = '\n'
			case 't':
				e = '\t'
			case 'r':
				e = '\r'
			}
			out = append(out, e)
		default:
			out = append(out, c)
		}
	}
	return nil, ErrSyntax
}

// ---- filter expressions ----

type exprKind uint8

const (
	exprOr exprKind = iota
	exprAnd
	exprNot
	exprCompare
	exprExists
)

type compareOp uint8

const (
	opEq compareOp = iota
	opNe
	opLt
	opLe
	opGt
	opGe
	opMatch
)

type expr struct {
	kind        exprKind
	left, right *expr // or, and, not (left)
	op          compareOp
	a, b        operand // compare (a op b), exists (a)
	re          *regexp.Regexp
}

// operand is a literal (a value in stored form) or a path from `@` or `$`.
type operand struct {
	literal []byte
	path    []step
	root    bool // `$`, not `@`
}

func (ps *pathParser) expr() (*expr, error) {
	ps.depth++
	defer func() { ps.depth-- }()
	if ps.depth > MaxNesting {
		return nil, ErrSyntax
	}
	left, err := ps.and()
	if err != nil {
		return nil, err
	}
	for {
		ps.skipSpace()
		if !ps.consume("||") {
			return left, nil
		}
		right, err := ps.and()
		if err != nil {
			return nil, err
		}
		left = &expr{kind: exprOr, left: left, right: right}
	}
}

func (ps *pathParser) and() (*expr, error) {
	left, err := ps.unary()
	if err != nil {
		return nil, err
	}
	for {
		ps.skipSpace()
		if !ps.consume("&&") {
			return left, nil
		}
		right, err := ps.unary()
		if err != nil {
			return nil, err
		}
		left = &expr{kind: exprAnd, left: left, right: right}
	}
}

func (ps *pathParser) consume(tok string) bool {
	if len(ps.s)-ps.pos >= len(tok) && string(ps.s[ps.pos:ps.pos+len(tok)]) == tok {
		ps.pos += len(tok)
		return true
	}
	return false
}

func (ps *pathParser) unary() (*expr, error) {
	ps.skipSpace()
	switch ps.peek() {
	case '!':
		if ps.pos+1 < len(ps.s) && ps.s[ps.pos+1] == '=' {
			return nil, ErrSyntax
		}
		ps.pos++
		ps.depth++
		defer func() { ps.depth-- }()
		if ps.depth > MaxNesting {
			return nil, ErrSyntax
		}
		e, err := ps.unary()
		if err != nil {
			return nil, err
		}
		return &expr{kind: exprNot, left: e}, nil
	case '(':
		ps.pos++
		e, err := ps.expr()
		if err != nil {
			return nil, err
		}
		ps.skipSpace()
		if ps.peek() != ')' {
			return nil, ErrSyntax
		}
		ps.pos++
		return e, nil
	}
	a, err := ps.operand()
	if err != nil {
		return nil, err
	}
	ps.skipSpace()
	op, ok := ps.compareOp()
	if !ok {
		if a.literal != nil {
			return nil, ErrSyntax
		}
		return &expr{kind: exprExists, a: a}, nil
	}
	ps.skipSpace()
	b, err := ps.operand()
	if err != nil {
		return nil, err
	}
	e := &expr{kind: exprCompare, op: op, a: a, b: b}
	if op == opMatch {
		if b.literal == nil || !isStringLiteral(b.literal) {
			return nil, ErrSyntax
		}
		if e.re, err = regexp.Compile(string(literalString(b.literal))); err != nil {
			return nil, ErrSyntax
		}
	}
	return e, nil
}

func (ps *pathParser) compareOp() (compareOp, bool) {
	for _, o := range []struct {
		tok string
		op  compareOp
	}{{"==", opEq}, {"!=", opNe}, {"<=", opLe}, {">=", opGe}, {"<", opLt}, {">", opGt}, {"=~", opMatch}} {
		if ps.consume(o.tok) {
			return o.op, true
		}
	}
	return 0, false
}

func (ps *pathParser) operand() (operand, error) {
	switch c := ps.peek(); {
	case c == '@' || c == '$':
		ps.pos++
		steps, err := ps.steps(nil, true)
		if err != nil {
			return operand{}, err
		}
		return operand{path: steps, root: c == '$'}, nil
	case c == '\'' || c == '"':
		s, err := ps.quoted()
		if err != nil {
			return operand{}, err
		}
		return operand{literal: appendStringLiteral(s)}, nil
	case c == '-' || c >= '0' && c <= '9':
		return ps.numberLiteral()
	case ps.consume("true"):
		return operand{literal: []byte{litTrue}}, nil
	case ps.consume("false"):
		return operand{literal: []byte{litFalse}}, nil
	case ps.consume("null"):
		return operand{literal: []byte{litNull}}, nil
	}
	return operand{}, ErrSyntax
}

func (ps *pathParser) numberLiteral() (operand, error) {
	start := ps.pos
	if ps.peek() == '-' {
		ps.pos++
	}
	integer := true
	for ps.pos < len(ps.s) {
		c := ps.s[ps.pos]
		if c >= '0' && c <= '9' {
			ps.pos++
			continue
		}
		if c == '.' || c == 'e' || c == 'E' || (c == '+' || c == '-') && (ps.s[ps.pos-1] == 'e' || ps.s[ps.pos-1] == 'E') {
			integer = false
			ps.pos++
			continue
		}
		break
	}
	text := string(ps.s[start:ps.pos])
	if integer {
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return operand{literal: appendIntLiteral(n)}, nil
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return operand{}, ErrSyntax
	}
	return operand{literal: appendFloatLiteral(f)}, nil
}
