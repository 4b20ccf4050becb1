// Package jsonpath parses and evaluates the paths of the JSON.* commands
// over documents in package jsondoc's stored form, in place.
//
// The syntax is RedisJSON's: a JSONPath starts with `$`, then steps:
// `.name`, `..name`, `.*`, `..*`, and brackets (after `.`, `..` or
// nothing) holding indexes `[0,-1]`, a slice `[start:end:step]`, names
// `['a',"b"]`, `[*]` or a filter `[?(@.price < 10 && @.tags[0] == "x")]`.
// A filter compares terms (`@...` and `$...` paths naming exactly one value,
// numbers, strings, true, false, null) with ==, !=, <, <=, >, >= and =~ (a
// regular expression), joined by && and || (&& first) and parentheses; a
// lone term tests that its path names exactly one value. Any other path is
// legacy (RedisJSON 1): `.` is the root, `.a.b` and `a.b` are `$.a.b`; its
// commands reply with one match's scalar.
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

// step is one `.`/`..`/`[...]` of a path: selectors applied to each node
// (to each node and all its descendants after `..`).
type step struct {
	descend bool
	sels    []selector
}

type selectorKind uint8

const (
	selName selectorKind = iota
	selIndex
	selWildcard
	selSlice
	selFilter
)

type selector struct {
	kind      selectorKind
	name      []byte
	index     int // also a slice's start
	end, step int
	hasStart  bool
	hasEnd    bool
	filter    *expr
}

// MaxNesting bounds the parentheses of a filter, so that a hostile path
// cannot exhaust the stack.
const MaxNesting = 64

// ErrSyntax is a path that does not parse.
var ErrSyntax = errors.New("invalid JSONPath")

// IsLegacy reports whether the path is in the legacy syntax (not `$...`).
func (p *Path) IsLegacy() bool { return p.legacy }

// IsRoot reports whether the path names the document itself (`$` or `.`).
func (p *Path) IsRoot() bool { return len(p.steps) == 0 }

// Definite reports whether the path names at most one value: single names
// and indexes only, no wildcard, list, slice, filter or descent.
func (p *Path) Definite() bool {
	for _, s := range p.steps {
		if s.descend || len(s.sels) != 1 || s.sels[0].kind > selIndex {
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
	p := &Path{}
	ps := pathParser{s: text, pos: 1}
	switch {
	case len(text) > 0 && text[0] == '$' && (len(text) == 1 || text[1] == '.' || text[1] == '['):
	case len(text) == 1 && text[0] == '.':
		return &Path{legacy: true}, nil
	case len(text) > 0 && text[0] == '.':
		p.legacy, ps.pos = true, 0
	default: // `a.b` is `$.a.b`
		p.legacy, ps.pos = true, 0
		ps.s = append([]byte{'.'}, text...)
	}
	steps, err := ps.steps(nil, false)
	if err != nil {
		return nil, err
	}
	ps.skipSpace()
	if ps.pos != len(ps.s) {
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
	for ps.pos < len(ps.s) && ps.s[ps.pos] == ' ' {
		ps.pos++
	}
}

// steps parses steps until something else (inside a filter, where a path
// ends at an operator) or the end.
func (ps *pathParser) steps(out []step, relative bool) ([]step, error) {
	for {
		ps.skipSpace()
		if ps.pos >= len(ps.s) {
			return out, nil
		}
		var st step
		var err error
		switch c := ps.s[ps.pos]; {
		case c == '.' && ps.pos+1 < len(ps.s) && ps.s[ps.pos+1] == '.':
			ps.pos += 2
			st.descend = true
			ps.skipSpace()
			switch ps.peek() {
			case '[':
				st.sels, err = ps.bracket()
			case '*':
				ps.pos++
				st.sels = []selector{{kind: selWildcard}}
			default:
				st.sels, err = ps.nameSel()
			}
		case c == '.':
			ps.pos++
			ps.skipSpace()
			switch ps.peek() {
			case '*':
				ps.pos++
				st.sels = []selector{{kind: selWildcard}}
			case '[':
				st.sels, err = ps.bracket()
			default:
				st.sels, err = ps.nameSel()
			}
		case c == '[':
			st.sels, err = ps.bracket()
		default:
			if relative {
				return out, nil
			}
			return nil, ErrSyntax
		}
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
}

// isNameByte reports whether c may appear in a dotted member name.
func isNameByte(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	switch c {
	case '-', '_', '`', '~', '+', '#', '%', '$', '^', '/', ':':
		return true
	}
	return false
}

func (ps *pathParser) nameSel() ([]selector, error) {
	start := ps.pos
	for ps.pos < len(ps.s) && isNameByte(ps.s[ps.pos]) {
		ps.pos++
	}
	if ps.pos == start {
		return nil, ErrSyntax
	}
	return []selector{{kind: selName, name: ps.s[start:ps.pos]}}, nil
}

// bracket parses `[...]`: a slice, indexes, names, `*` or a filter.
func (ps *pathParser) bracket() ([]selector, error) {
	ps.pos++ // '['
	ps.skipSpace()
	var sels []selector
	var err error
	switch c := ps.peek(); {
	case c == '*':
		ps.pos++
		sels = []selector{{kind: selWildcard}}
	case c == '?':
		ps.pos++
		var e *expr
		if e, err = ps.filter(); err == nil {
			sels = []selector{{kind: selFilter, filter: e}}
		}
	case c == '\'' || c == '"':
		sels, err = ps.names()
	default:
		sels, err = ps.indexes()
	}
	if err != nil {
		return nil, err
	}
	ps.skipSpace()
	if ps.peek() != ']' {
		return nil, ErrSyntax
	}
	ps.pos++
	return sels, nil
}

func (ps *pathParser) names() ([]selector, error) {
	var sels []selector
	for {
		if c := ps.peek(); c != '\'' && c != '"' {
			return nil, ErrSyntax
		}
		s, err := ps.quoted()
		if err != nil {
			return nil, err
		}
		sels = append(sels, selector{kind: selName, name: s})
		ps.skipSpace()
		if ps.peek() != ',' {
			return sels, nil
		}
		ps.pos++
		ps.skipSpace()
	}
}

// number parses an integer without leading zeros; ok=false when none is
// there.
func (ps *pathParser) number() (int, bool, error) {
	start := ps.pos
	if ps.peek() == '-' {
		ps.pos++
	}
	digits := ps.pos
	for ps.pos < len(ps.s) && ps.s[ps.pos] >= '0' && ps.s[ps.pos] <= '9' {
		ps.pos++
	}
	switch {
	case ps.pos == digits:
		ps.pos = start
		return 0, false, nil
	case ps.s[digits] == '0' && ps.pos-digits > 1:
		return 0, false, ErrSyntax
	}
	n, err := strconv.Atoi(string(ps.s[start:ps.pos]))
	if err != nil {
		return 0, false, ErrSyntax
	}
	return n, true, nil
}

// indexes parses a slice `[start]:[end][:[step]]` or a list of indexes.
func (ps *pathParser) indexes() ([]selector, error) {
	first, has, err := ps.number()
	if err != nil {
		return nil, err
	}
	ps.skipSpace()
	if ps.peek() == ':' {
		sel := selector{kind: selSlice, index: first, hasStart: has, step: 1}
		ps.pos++
		ps.skipSpace()
		if sel.end, sel.hasEnd, err = ps.number(); err != nil {
			return nil, err
		}
		ps.skipSpace()
		if ps.peek() == ':' {
			ps.pos++
			ps.skipSpace()
			step, has, err := ps.number()
			switch {
			case err != nil:
				return nil, err
			case has && step <= 0:
				return nil, ErrSyntax
			case has:
				sel.step = step
			}
		}
		return []selector{sel}, nil
	}
	if !has {
		return nil, ErrSyntax
	}
	sels := []selector{{kind: selIndex, index: first}}
	for ps.peek() == ',' {
		ps.pos++
		ps.skipSpace()
		n, has, err := ps.number()
		if err != nil || !has {
			return nil, ErrSyntax
		}
		sels = append(sels, selector{kind: selIndex, index: n})
		ps.skipSpace()
	}
	return sels, nil
}

// quoted parses a '...' or "..." string, where a backslash escapes only a
// backslash or the quote.
func (ps *pathParser) quoted() ([]byte, error) {
	q := ps.s[ps.pos]
	ps.pos++
	out := []byte{}
	for ps.pos < len(ps.s) {
		c := ps.s[ps.pos]
		ps.pos++
		switch c {
		case q:
			return out, nil
		case '\\':
			if ps.pos >= len(ps.s) || (ps.s[ps.pos] != q && ps.s[ps.pos] != '\\') {
				return nil, ErrSyntax
			}
			out = append(out, ps.s[ps.pos])
			ps.pos++
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
	left, right *expr // or, and
	op          compareOp
	a, b        operand        // compare (a op b), exists (a)
	re          *regexp.Regexp // opMatch with a literal: nil when it does not compile
}

// operand is a literal (a value in stored form) or a path from `@` or `$`.
type operand struct {
	literal []byte
	path    []step
	root    bool // `$`, not `@`
	escaped bool // a string literal written with escapes (=~ takes only plain ones)
}

// filter parses `||`-joined `&&`-chains of terms and parenthesized filters.
func (ps *pathParser) filter() (*expr, error) {
	ps.depth++
	defer func() { ps.depth-- }()
	if ps.depth > MaxNesting {
		return nil, ErrSyntax
	}
	left, err := ps.andChain()
	if err != nil {
		return nil, err
	}
	for {
		ps.skipSpace()
		if !ps.consume("||") {
			return left, nil
		}
		right, err := ps.andChain()
		if err != nil {
			return nil, err
		}
		left = &expr{kind: exprOr, left: left, right: right}
	}
}

func (ps *pathParser) andChain() (*expr, error) {
	left, err := ps.inner()
	if err != nil {
		return nil, err
	}
	for {
		ps.skipSpace()
		if !ps.consume("&&") {
			return left, nil
		}
		right, err := ps.inner()
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

// inner parses `(filter)`, `term op term` or `term`.
func (ps *pathParser) inner() (*expr, error) {
	ps.skipSpace()
	if ps.peek() == '(' {
		ps.pos++
		e, err := ps.filter()
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
		return &expr{kind: exprExists, a: a}, nil
	}
	ps.skipSpace()
	b, err := ps.operand()
	if err != nil {
		return nil, err
	}
	e := &expr{kind: exprCompare, op: op, a: a, b: b}
	if op == opMatch && b.literal != nil && isStringLiteral(b.literal) && !b.escaped {
		e.re, _ = regexp.Compile(string(literalString(b.literal))) // one that does not compile matches nothing
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
		var steps []step
		if isNameByte(ps.peek()) || ps.peek() == '*' { // `@a` is `@.a`
			sels := []selector{{kind: selWildcard}}
			if ps.peek() == '*' {
				ps.pos++
			} else if s, err := ps.nameSel(); err == nil {
				sels = s
			}
			steps = append(steps, step{sels: sels})
		}
		steps, err := ps.steps(steps, true)
		if err != nil {
			return operand{}, err
		}
		return operand{path: steps, root: c == '$'}, nil
	case c == '\'' || c == '"':
		start := ps.pos
		s, err := ps.quoted()
		if err != nil {
			return operand{}, err
		}
		escaped := len(s) != ps.pos-start-2
		return operand{literal: appendStringLiteral(s), escaped: escaped}, nil
	case c == '-' || c >= '0' && c <= '9':
		return ps.decimal()
	case ps.consume("true"):
		return operand{literal: []byte{litTrue}}, nil
	case ps.consume("false"):
		return operand{literal: []byte{litFalse}}, nil
	case ps.consume("null"):
		return operand{literal: []byte{litNull}}, nil
	}
	return operand{}, ErrSyntax
}

// decimal parses an integer with an optional fraction (no exponent).
func (ps *pathParser) decimal() (operand, error) {
	start := ps.pos
	n, has, err := ps.number()
	if err != nil || !has {
		return operand{}, ErrSyntax
	}
	if ps.peek() != '.' || ps.pos+1 >= len(ps.s) || ps.s[ps.pos+1] < '0' || ps.s[ps.pos+1] > '9' {
		return operand{literal: appendIntLiteral(int64(n))}, nil
	}
	ps.pos++
	for ps.pos < len(ps.s) && ps.s[ps.pos] >= '0' && ps.s[ps.pos] <= '9' {
		ps.pos++
	}
	f, err := strconv.ParseFloat(string(ps.s[start:ps.pos]), 64)
	if err != nil {
		return operand{}, ErrSyntax
	}
	return operand{literal: appendFloatLiteral(f)}, nil
}
