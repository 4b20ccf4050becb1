package jsonpath

import (
	"bytes"
	"errors"
	"regexp"

	"github.com/keyhive/keyhive/internal/jsondoc"
)

// Match is a value a path found: its offset in the document, the offset of
// the container holding it (-1 for the document itself) and where its member
// starts there (its key in an object, the value itself in an array).
type Match struct {
	Off, Parent, Member int
}

// Budget is how many values one evaluation may visit before it gives up
// with ErrTooComplex (at least, and more for a document of more than
// Budget/8 bytes: 8 visits per byte): descents and filters nest, so a short
// path can ask for work exponential in its length.
const Budget = 1 << 22

// ErrTooComplex is an evaluation that exceeded Budget.
var ErrTooComplex = errors.New("JSONPath evaluation exceeds its work limit")

// Eval appends to dst the values the path finds in doc, in the order
// RedisJSON lists them: each step maps the matches so far, in order, to
// theirs; after `..`, a node's own matches come before its descendants'.
func (p *Path) Eval(dst []Match, doc []byte) ([]Match, error) {
	ev := evaluator{budget: max(Budget, 8*len(doc))}
	start := len(dst)
	dst = append(dst, Match{Off: 0, Parent: -1, Member: 0})
	dst = ev.steps(dst, start, doc, p.steps)
	if ev.budget < 0 {
		return dst[:start], ErrTooComplex
	}
	return dst, nil
}

type evaluator struct {
	budget int
}

// steps applies steps to the matches dst[start:], replacing them with the
// results; doc is the whole document (for `$` inside filters too).
func (ev *evaluator) steps(dst []Match, start int, doc []byte, steps []step) []Match {
	for _, st := range steps {
		n := len(dst)
		for i := start; i < n && ev.budget >= 0; i++ {
			dst = ev.step(dst, doc, dst[i], &st)
		}
		dst = append(dst[:start], dst[n:]...)
	}
	return dst
}

func (ev *evaluator) step(dst []Match, doc []byte, m Match, st *step) []Match {
	for _, sel := range st.sels {
		dst = ev.selector(dst, doc, m, &sel)
	}
	if st.descend {
		dst = ev.descend(dst, doc, m.Off, st)
	}
	return dst
}

// descend applies st's selectors to every descendant of the container at
// off, each node before its own descendants.
func (ev *evaluator) descend(dst []Match, doc []byte, off int, st *step) []Match {
	kind := jsondoc.KindAt(doc, off)
	if kind != jsondoc.Array && kind != jsondoc.Object {
		return dst
	}
	end := jsondoc.End(doc, off)
	for p := jsondoc.First(doc, off); p < end; {
		v := p
		if kind == jsondoc.Object {
			_, v = jsondoc.Member(doc, p)
		}
		ev.budget--
		if ev.budget < 0 {
			return dst
		}
		child := Match{Off: v, Parent: off, Member: p}
		for _, sel := range st.sels {
			dst = ev.selector(dst, doc, child, &sel)
		}
		dst = ev.descend(dst, doc, v, st)
		p = v + jsondoc.Size(doc, v)
	}
	return dst
}

func (ev *evaluator) selector(dst []Match, doc []byte, m Match, sel *selector) []Match {
	off := m.Off
	kind := jsondoc.KindAt(doc, off)
	ev.budget--
	switch sel.kind {
	case selName:
		if kind == jsondoc.Object {
			if v, mem, ok := jsondoc.Lookup(doc, off, sel.name); ok {
				dst = append(dst, Match{Off: v, Parent: off, Member: mem})
			}
		}
	case selWildcard, selFilter:
		if kind != jsondoc.Array && kind != jsondoc.Object {
			// A filter tests a scalar itself.
			if sel.kind == selFilter && ev.test(sel.filter, doc, off) {
				dst = append(dst, m)
			}
			return dst
		}
		end := jsondoc.End(doc, off)
		for p := jsondoc.First(doc, off); p < end; {
			v := p
			if kind == jsondoc.Object {
				_, v = jsondoc.Member(doc, p)
			}
			ev.budget--
			if ev.budget < 0 {
				return dst
			}
			if sel.kind == selWildcard || ev.test(sel.filter, doc, v) {
				dst = append(dst, Match{Off: v, Parent: off, Member: p})
			}
			p = v + jsondoc.Size(doc, v)
		}
	case selIndex:
		if kind != jsondoc.Array {
			return dst
		}
		if i := absIndex(sel.index, jsondoc.Len(doc, off)); i < jsondoc.Len(doc, off) {
			v := jsondoc.Index(doc, off, i)
			dst = append(dst, Match{Off: v, Parent: off, Member: v})
		}
	case selSlice:
		if kind != jsondoc.Array {
			return dst
		}
		n := jsondoc.Len(doc, off)
		from, to := 0, n
		if sel.hasStart {
			from = absIndex(sel.index, n)
		}
		if sel.hasEnd {
			to = absIndex(sel.end, n)
		}
		p := jsondoc.First(doc, off)
		for i := 0; i < to; i++ {
			if i >= from && (i-from)%sel.step == 0 {
				dst = append(dst, Match{Off: p, Parent: off, Member: p})
			}
			p += jsondoc.Size(doc, p)
		}
	}
	return dst
}

// absIndex is an index of an array of n elements: a negative one counts
// from the end and stops at the first element, a positive one stops at n
// (no element).
func absIndex(i, n int) int {
	if i >= 0 {
		return min(i, n)
	}
	return max(i+n, 0)
}

// ---- filters ----

// Literals are values in jsondoc's stored form.
func appendStringLiteral(s []byte) []byte { return jsondoc.AppendString(nil, s) }
func appendIntLiteral(n int64) []byte     { return jsondoc.AppendInt(nil, n) }
func appendFloatLiteral(f float64) []byte { return jsondoc.AppendFloat(nil, f) }
func isStringLiteral(b []byte) bool       { return jsondoc.KindAt(b, 0) == jsondoc.String }
func literalString(b []byte) []byte       { return jsondoc.Str(b, 0) }

var (
	litTrue  = jsondoc.AppendBool(nil, true)[0]
	litFalse = jsondoc.AppendBool(nil, false)[0]
	litNull  = jsondoc.AppendNull(nil)[0]
)

// test evaluates the filter with `@` at the value at cur. A path term
// stands for a value only when it names exactly one; otherwise it equals
// nothing (and != everything).
func (ev *evaluator) test(e *expr, doc []byte, cur int) bool {
	switch e.kind {
	case exprOr:
		return ev.test(e.left, doc, cur) || ev.test(e.right, doc, cur)
	case exprAnd:
		return ev.test(e.left, doc, cur) && ev.test(e.right, doc, cur)
	case exprExists:
		_, _, ok := ev.term(&e.a, doc, cur)
		return ok
	}
	ad, a, aok := ev.term(&e.a, doc, cur)
	bd, b, bok := ev.term(&e.b, doc, cur)
	if e.op == opMatch {
		return aok && bok && e.a.literal == nil && match(e, ad, a, bd, b)
	}
	if e.op == opNe {
		return !(aok && bok && compare(opEq, ad, a, bd, b))
	}
	return aok && bok && compare(e.op, ad, a, bd, b)
}

// term returns the operand's value (its literal, or the one value its
// path names): the document holding it and its offset.
func (ev *evaluator) term(o *operand, doc []byte, cur int) ([]byte, int, bool) {
	if o.literal != nil {
		return o.literal, 0, true
	}
	from := cur
	if o.root {
		from = 0
	}
	var buf [2]Match
	ms := ev.steps(append(buf[:0], Match{Off: from, Parent: -1}), 0, doc, o.path)
	if len(ms) != 1 {
		return nil, 0, false
	}
	return doc, ms[0].Off, true
}

// match is =~: a string value against a regular expression, a literal one
// (compiled with the path) or another string value.
func match(e *expr, ad []byte, a int, bd []byte, b int) bool {
	if jsondoc.KindAt(ad, a) != jsondoc.String || jsondoc.KindAt(bd, b) != jsondoc.String {
		return false
	}
	re := e.re
	if e.b.literal == nil {
		var err error
		if re, err = regexp.Compile(string(jsondoc.Str(bd, b))); err != nil {
			return false
		}
	}
	return re != nil && !e.b.escaped && re.Match(jsondoc.Str(ad, a))
}

// compare orders numbers by value, strings by bytes, false before true,
// and null equal to null; other pairs only compare equal when they are
// equal values (two containers), else not at all.
func compare(op compareOp, ad []byte, a int, bd []byte, b int) bool {
	ka, kb := jsondoc.KindAt(ad, a), jsondoc.KindAt(bd, b)
	numeric := func(k jsondoc.Kind) bool { return k == jsondoc.Integer || k == jsondoc.Number }
	var c int
	switch {
	case numeric(ka) && numeric(kb):
		if ka == jsondoc.Integer && kb == jsondoc.Integer {
			c = cmpOrdered(jsondoc.Int(ad, a), jsondoc.Int(bd, b))
		} else {
			c = cmpOrdered(jsondoc.Num(ad, a), jsondoc.Num(bd, b))
		}
	case ka == jsondoc.String && kb == jsondoc.String:
		c = bytes.Compare(jsondoc.Str(ad, a), jsondoc.Str(bd, b))
	case ka == jsondoc.Bool && kb == jsondoc.Bool:
		c = cmpOrdered(boolNum(jsondoc.BoolAt(ad, a)), boolNum(jsondoc.BoolAt(bd, b)))
	case ka == jsondoc.Null && kb == jsondoc.Null:
		c = 0
	default:
		return op == opEq && (ka == jsondoc.Array || ka == jsondoc.Object) && jsondoc.Equal(ad, a, bd, b)
	}
	switch op {
	case opEq:
		return c == 0
	case opLt:
		return c < 0
	case opLe:
		return c <= 0
	case opGt:
		return c > 0
	}
	return c >= 0
}

func boolNum(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func cmpOrdered[T int64 | float64](x, y T) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}
