package vset

import (
	"bytes"
	"math"
	"strconv"
)

// A Filter is a compiled FILTER expression, as VSIM takes one: JavaScript-
// like operators over numbers, strings, tuples ([1, "a"]), null and
// selectors (.field, a top-level field of the element's JSON attributes):
//
//	!  not                     (unary, binding tightest)
//	**                         (right associative)
//	*  /  %
//	+  -
//	>  >=  <  <=  ==  !=  in
//	and  &&
//	or  ||
//
// Comparisons and arithmetic take numbers (a string that is a number is
// one, any other is 0); == compares strings as strings; x in [..] is
// membership, "a" in "cat" a substring test. JSON true and false are 1
// and 0, arrays of numbers and strings tuples. An element without
// attributes, with attributes that are not a JSON object, or without a
// field the expression names (or with one of another JSON type) does not
// match. An operand is false when it is 0, "" or null.
//
// The expression compiles to a postfix program run on a value stack, so
// a match allocates nothing but the strings it has to unescape.
type Filter struct {
	prog  []instr
	stack []value
	buf   []byte // unescaped strings of the current match
	elems []value
}

type kind uint8

const (
	kNum kind = iota
	kStr
	kTuple
	kNull
)

type value struct {
	kind  kind
	num   float64
	str   []byte
	tuple []value
}

type opcode uint8

const (
	opPush opcode = iota
	opSelect
	opNot
	opPow
	opMul
	opDiv
	opMod
	opAdd
	opSub
	opGT
	opGTE
	opLT
	opLTE
	opEq
	opNEq
	opIn
	opAnd
	opOr
	opOpen
	opClose
)

type instr struct {
	op  opcode
	val value  // opPush
	sel []byte // opSelect
}

// operators, longest first where one is a prefix of another.
var operators = []struct {
	name string
	op   opcode
	prec int
}{
	{"**", opPow, 5}, {">=", opGTE, 2}, {"<=", opLTE, 2}, {"==", opEq, 2}, {"!=", opNEq, 2},
	{"&&", opAnd, 1}, {"||", opOr, 0}, {"and", opAnd, 1}, {"not", opNot, 6}, {"or", opOr, 0}, {"in", opIn, 2},
	{"(", opOpen, 7}, {")", opClose, 7}, {"!", opNot, 6}, {"*", opMul, 4}, {"/", opDiv, 4}, {"%", opMod, 4},
	{"+", opAdd, 3}, {"-", opSub, 3}, {">", opGT, 2}, {"<", opLT, 2},
}

const opChars = "+-*%/!()<>=|&"

// SyntaxError is an expression that does not compile; Near is the text
// from where it went wrong, as Redis's error shows it.
type SyntaxError struct{ Near string }

func (e *SyntaxError) Error() string { return "syntax error in FILTER expression near: " + e.Near }

type token struct {
	op  opcode // opPush for values, opSelect for selectors
	val value
	sel []byte
	pos int
	eof bool
}

// CompileFilter compiles expr.
func CompileFilter(expr string) (*Filter, error) {
	toks, errAt := tokenize(expr)
	if errAt >= 0 {
		return nil, &SyntaxError{Near: expr[errAt:]}
	}
	p := parser{toks: toks}
	if !p.expr(0) || !p.peek().eof {
		return nil, &SyntaxError{Near: expr}
	}
	return &Filter{prog: p.prog}, nil
}

func isAlpha(c byte) bool    { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isDigit(c byte) bool    { return c >= '0' && c <= '9' }
func isSelector(c byte) bool { return isAlpha(c) || isDigit(c) || c == '_' || c == '-' }
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// tokenize splits expr into tokens, or returns where it could not (-1:
// it could).
func tokenize(expr string) ([]token, int) {
	var toks []token
	for i := 0; ; {
		for i < len(expr) && isSpace(expr[i]) {
			i++
		}
		if i == len(expr) {
			return append(toks, token{eof: true, pos: i}), -1
		}
		// A minus starts a number where an operand is due.
		operand := len(toks) == 0 || toks[len(toks)-1].op >= opNot && toks[len(toks)-1].op != opClose
		c := expr[i]
		var t token
		var n int
		switch {
		case isDigit(c) || operand && c == '-' && i+1 < len(expr) && isDigit(expr[i+1]):
			t.val, n = lexNumber(expr[i:])
		case c == '"' || c == '\'':
			t.val.kind = kStr
			t.val.str, n = lexString(expr[i:])
		case c == '.' && i+1 < len(expr) && isSelector(expr[i+1]):
			n = 1
			for i+n < len(expr) && isSelector(expr[i+n]) {
				n++
			}
			t.op, t.sel = opSelect, []byte(expr[i+1:i+n])
		case c == '[':
			t.val, n = lexTuple(expr[i:])
		case isAlpha(c) || bytes.IndexByte([]byte(opChars), c) >= 0:
			t, n = lexOperator(expr[i:])
		}
		if n <= 0 {
			return nil, i
		}
		t.pos = i
		toks = append(toks, t)
		i += n
	}
}

// lexNumber reads a number literal; n 0 when it is not one.
func lexNumber(s string) (value, int) {
	n := 0
	for n < len(s) && (isDigit(s[n]) || s[n] == '.' || s[n]|0x20 == 'e' || n == 0 && s[n] == '-') {
		n++
	}
	f, err := strconv.ParseFloat(s[:n], 64)
	if err != nil && !isRange(err) {
		return value{}, 0
	}
	return value{kind: kNum, num: f}, n
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// lexString reads a quoted string, unescaping it; n 0 when it does not end.
func lexString(s string) ([]byte, int) {
	quote := s[0]
	out := []byte{}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' && i+1 < len(s):
			i++
			out = append(out, unescape(s[i]))
		case c == quote:
			return out, i + 1
		default:
			out = append(out, c)
		}
	}
	return nil, 0
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	case 'r':
		return '\r'
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	}
	return c
}

// lexTuple reads [a, b, ...] of numbers and strings; n 0 when malformed.
func lexTuple(s string) (value, int) {
	v := value{kind: kTuple, tuple: []value{}}
	i := 1
	skip := func() {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
	}
	skip()
	if i < len(s) && s[i] == ']' {
		return v, i + 1
	}
	for {
		skip()
		if i == len(s) {
			return value{}, 0
		}
		var e value
		var n int
		switch c := s[i]; {
		case isDigit(c) || c == '-':
			e, n = lexNumber(s[i:])
		case c == '"' || c == '\'':
			e.kind = kStr
			e.str, n = lexString(s[i:])
		}
		if n == 0 {
			return value{}, 0
		}
		v.tuple = append(v.tuple, e)
		i += n
		skip()
		if i < len(s) && s[i] == ']' {
			return v, i + 1
		}
		if i == len(s) || s[i] != ',' {
			return value{}, 0
		}
		i++
	}
}

// lexOperator reads the longest operator (or null) that starts the run of
// letters and operator characters at s.
func lexOperator(s string) (token, int) {
	run := 0 // looked at up to one past "null", the longest name: linear time
	for run < min(len(s), 5) && (isAlpha(s[run]) || bytes.IndexByte([]byte(opChars), s[run]) >= 0) {
		run++
	}
	if s[:run] == "null" {
		return token{val: value{kind: kNull}}, 4
	}
	best := 0
	var t token
	for _, o := range operators {
		if len(o.name) > best && len(o.name) <= run && s[:len(o.name)] == o.name {
			best, t.op = len(o.name), o.op
		}
	}
	return t, best
}

func precedence(op opcode) int {
	for _, o := range operators {
		if o.op == op {
			return o.prec
		}
	}
	return -1
}

// parser turns tokens into a postfix program by precedence climbing.
type parser struct {
	toks  []token
	at    int
	prog  []instr
	depth int // operands open: nesting past maxNesting is refused
}

// maxNesting bounds parentheses and negations inside each other, so
// that no expression exhausts the stack.
const maxNesting = 1000

func (p *parser) peek() token { return p.toks[p.at] }

func isBinary(op opcode) bool { return op >= opPow && op <= opOr }

// expr parses operands joined by binary operators of at least prec.
func (p *parser) expr(prec int) bool {
	if !p.unary() {
		return false
	}
	for {
		t := p.peek()
		if t.eof || !isBinary(t.op) || precedence(t.op) < prec {
			return true
		}
		p.at++
		next := precedence(t.op) + 1
		if t.op == opPow {
			next = precedence(t.op)
		}
		if !p.expr(next) {
			return false
		}
		p.prog = append(p.prog, instr{op: t.op})
	}
}

// unary parses an operand: a value, a selector, a parenthesized
// expression or a negated operand.
func (p *parser) unary() bool {
	if p.depth++; p.depth > maxNesting {
		return false
	}
	defer func() { p.depth-- }()
	t := p.peek()
	switch {
	case t.eof:
		return false
	case t.op == opNot:
		p.at++
		if !p.unary() {
			return false
		}
		p.prog = append(p.prog, instr{op: opNot})
	case t.op == opOpen:
		p.at++
		if !p.expr(0) || p.peek().eof || p.peek().op != opClose {
			return false
		}
		p.at++
	case t.op == opPush || t.op == opSelect:
		p.at++
		p.prog = append(p.prog, instr{op: t.op, val: t.val, sel: t.sel})
	default:
		return false
	}
	return true
}

// Match runs the expression over an element's attributes.
func (f *Filter) Match(attrs []byte) bool {
	if len(attrs) == 0 {
		return false
	}
	st := f.stack[:0]
	f.buf, f.elems = f.buf[:0], f.elems[:0]
	for i := range f.prog {
		in := &f.prog[i]
		switch in.op {
		case opPush:
			st = append(st, in.val)
			continue
		case opSelect:
			v, ok := f.field(attrs, in.sel)
			if !ok {
				f.stack = st
				return false
			}
			st = append(st, v)
			continue
		case opNot:
			st[len(st)-1] = boolValue(!truthy(st[len(st)-1]))
			continue
		}
		a, b := st[len(st)-2], st[len(st)-1]
		st = st[:len(st)-1]
		st[len(st)-1] = apply(in.op, a, b)
	}
	f.stack = st
	return len(st) == 1 && truthy(st[0])
}

func boolValue(b bool) value {
	if b {
		return value{kind: kNum, num: 1}
	}
	return value{kind: kNum}
}

func apply(op opcode, a, b value) value {
	switch op {
	case opPow:
		return value{kind: kNum, num: math.Pow(number(a), number(b))}
	case opMul:
		return value{kind: kNum, num: number(a) * number(b)}
	case opDiv:
		return value{kind: kNum, num: number(a) / number(b)}
	case opMod:
		return value{kind: kNum, num: math.Mod(number(a), number(b))}
	case opAdd:
		return value{kind: kNum, num: number(a) + number(b)}
	case opSub:
		return value{kind: kNum, num: number(a) - number(b)}
	case opGT:
		return boolValue(number(a) > number(b))
	case opGTE:
		return boolValue(number(a) >= number(b))
	case opLT:
		return boolValue(number(a) < number(b))
	case opLTE:
		return boolValue(number(a) <= number(b))
	case opEq:
		return boolValue(equal(a, b))
	case opNEq:
		return boolValue(!equal(a, b))
	case opIn:
		switch {
		case b.kind == kTuple:
			for _, e := range b.tuple {
				if equal(a, e) {
					return boolValue(true)
				}
			}
		case a.kind == kStr && b.kind == kStr:
			return boolValue(bytes.Contains(b.str, a.str))
		}
		return boolValue(false)
	case opAnd:
		return boolValue(truthy(a) && truthy(b))
	}
	return boolValue(truthy(a) || truthy(b))
}

// number is v as an operand of arithmetic: a string that is a whole
// number literal is its number, anything else not a number is 0.
func number(v value) float64 {
	switch v.kind {
	case kNum:
		return v.num
	case kStr:
		f, err := strconv.ParseFloat(string(v.str), 64)
		if err != nil && !isRange(err) {
			return 0
		}
		return f
	}
	return 0
}

func truthy(v value) bool {
	switch v.kind {
	case kNum:
		return v.num != 0
	case kStr:
		return len(v.str) > 0
	case kNull:
		return false
	}
	return true
}

func equal(a, b value) bool {
	switch {
	case a.kind == kStr && b.kind == kStr:
		return bytes.Equal(a.str, b.str)
	case a.kind == kNum && b.kind == kNum:
		return a.num == b.num
	case a.kind == kNull || b.kind == kNull:
		return a.kind == b.kind
	}
	return number(a) == number(b)
}
