package jsonpath

import (
	"bytes"
	"errors"

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

// Eval appends to dst the values the path finds in doc, in the order the
// path visits them (document order within a step; after `..`, each node's
// matches before its descendants'; a value a descent reaches twice is
// listed once).
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
		if st.descend && len(dst)-start > 1 {
			dst = dedupe(dst, start)
		}
	}
	return dst
}

// dedupe drops the matches of dst[start:] seen before in it.
func dedupe(dst []Match, start int) []Match {
	seen := make(map[int]struct{}, len(dst)-start)
	out := start
	for _, m := range dst[start:] {
		if _, dup := seen[m.Off]; !dup {
			seen[m.Off] = struct{}{}
			dst[out] = m
			out++
		}
	}
	return dst[:out]
}

func (ev *evaluator) step(dst []Match, doc []byte, m Match, st *step) []Match {
	for _, sel := range st.sels {
		dst = ev.selector(dst, doc, m.Off, &sel)
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
		if k := jsondoc.KindAt(doc, v); k == jsondoc.Array || k == jsondoc.Object {
			for _, sel := range st.sels {
				dst = ev.selector(dst, doc, v, &sel)
			}
			dst = ev.descend(dst, doc, v, st)
		}
		p = v + jsondoc.Size(doc, v)
	}
	return dst
}

func (ev *evaluator) selector(dst []Match, doc []byte, off int, sel *selector) []Match {
	kind := jsondoc.KindAt(doc, off)
	ev.budget--
	switch sel.kind {
	case selName:
		if kind == jsondoc.Object {
			if v, m, ok := jsondoc.Lookup(doc, off, sel.name); ok {
				dst = append(dst, Match{Off: v, Parent: off, Member: m})
			}
		}
	case selWildcard, selFilter:
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
			if sel.kind == selWildcard || ev.test(sel.filter, doc, v) {
				dst = append(dst, Match{Off: v, Parent: off, Member: p})
			}
			p = v + jsondoc.Size(doc, v)
		}
	case selIndex:
		if kind != jsondoc.Array {
			return dst
		}
		n := jsondoc.Len(doc, off)
		i := sel.index
		if i < 0 {
			i += n
		}
		if i >= 0 && i < n {
			v := jsondoc.Index(doc, off, i)
			dst = append(dst, Match{Off: v, Parent: off, Member: v})
		}
	case selSlice:
		if kind != jsondoc.Array {
			return dst
		}
		dst = applySlice(dst, doc, off, sel)
	}
	return dst
}

// applySlice selects [start:end:step] as Python slices do: negative bounds
// count from the end, bounds are clamped, a negative step walks backwards.
func applySlice(dst []Match, doc []byte, off int, sel *selector) []Match {
	n := jsondoc.Len(doc, off)
	step := sel.step
	if step == 0 || n == 0 {
		return dst
	}
	norm := func(i, lo, hi int) int {
		if i < 0 {
			i += n
		}
		return min(max(i, lo), hi)
	}
	var from, to int
	if step > 0 {
		from, to = 0, n
		if sel.hasStart {
			from = norm(sel.start, 0, n)
		}
		if sel.hasEnd {
			to = norm(sel.end, 0, n)
		}
	} else {
		from, to = n-1, -1
		if sel.hasStart {
			from = norm(sel.start, -1, n-1)
		}
		if sel.hasEnd {
			to = norm(sel.end, -1, n-1)
		}
	}
	if step > 0 {
		p, i := jsondoc.First(doc, off), 0
		for ; i < from; i++ {
			p += jsondoc.Size(doc, p)
		}
		for ; i < to; i++ {
			if (i-from)%step == 0 {
				dst = append(dst, Match{Off: p, Parent: off, Member: p})
			}
			p += jsondoc.Size(doc, p)
		}
		return dst
	}
	for i := from; i > to; i += step {
		v := jsondoc.Index(doc, off, i)
		dst = append(dst, Match{Off: v, Parent: off, Member: v})
	}
	return dst
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

// test evaluates the filter with `@` at the value at cur.
func (ev *evaluator) test(e *expr, doc []byte, cur int) bool {
	switch e.kind {
	case exprOr:
		return ev.test(e.left, doc, cur) || ev.test(e.right, doc, cur)
	case exprAnd:
		return ev.test(e.left, doc, cur) && ev.test(e.right, doc, cur)
	case exprNot:
		return !ev.test(e.left, doc, cur)
	case exprExists:
		var buf [8]Match
		return len(ev.values(&e.a, buf[:0], doc, cur)) > 0
	}
	var abuf, bbuf [8]Match
	as := ev.values(&e.a, abuf[:0], doc, cur)
	bs := ev.values(&e.b, bbuf[:0], doc, cur)
	// A path naming several values compares true when any of them does.
	for _, a := range as {
		for _, b := range bs {
			if e.compare(e.a.docOf(doc), a.Off, e.b.docOf(doc), b.Off) {
				return true
			}
		}
	}
	return false
}

// values returns what the operand names: its literal, or its path's matches.
func (ev *evaluator) values(o *operand, dst []Match, doc []byte, cur int) []Match {
	if o.literal != nil {
		return append(dst, Match{Off: 0, Parent: -1})
	}
	from := cur
	if o.root {
		from = 0
	}
	start := len(dst)
	dst = append(dst, Match{Off: from, Parent: -1})
	return ev.steps(dst, start, doc, o.path)
}

func (o *operand) docOf(doc []byte) []byte {
	if o.literal != nil {
		return o.literal
	}
	return doc
}

func (e *expr) compare(ad []byte, a int, bd []byte, b int) bool {
	ka, kb := jsondoc.KindAt(ad, a), jsondoc.KindAt(bd, b)
	numeric := func(k jsondoc.Kind) bool { return k == jsondoc.Integer || k == jsondoc.Number }
	if e.op == opMatch {
		return ka == jsondoc.String && kb == jsondoc.String && e.re.Match(jsondoc.Str(ad, a))
	}
	var c int // -1, 0, 1: a's order against b's
	switch {
	case numeric(ka) && numeric(kb):
		if ka == jsondoc.Integer && kb == jsondoc.Integer {
			x, y := jsondoc.Int(ad, a), jsondoc.Int(bd, b)
			c = cmpOrdered(x, y)
		} else {
			x, y := jsondoc.Num(ad, a), jsondoc.Num(bd, b)
			if x != x || y != y {
				return e.op == opNe
			}
			c = cmpOrdered(x, y)
		}
	case ka == jsondoc.String && kb == jsondoc.String:
		c = bytes.Compare(jsondoc.Str(ad, a), jsondoc.Str(bd, b))
	case ka != kb:
		return e.op == opNe
	default: // null, booleans, arrays, objects: equality only
		eq := bytes.Equal(ad[a:jsondoc.End(ad, a)], bd[b:jsondoc.End(bd, b)])
		switch e.op {
		case opEq:
			return eq
		case opNe:
			return !eq
		}
		return false
	}
	switch e.op {
	case opEq:
		return c == 0
	case opNe:
		return c != 0
	case opLt:
		return c < 0
	case opLe:
		return c <= 0
	case opGt:
		return c > 0
	}
	return c >= 0
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
