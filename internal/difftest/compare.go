package difftest

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Exact requires byte-identical replies. It is what Do uses.
func Exact(redis, keyhive Reply) error {
	if bytes.Equal(redis.Raw, keyhive.Raw) {
		return nil
	}
	return fmt.Errorf("replies differ at byte %d", commonPrefix(redis.Raw, keyhive.Raw))
}

// Unordered compares a top-level array, set or push as a multiset of its
// elements (each compared exactly), and a map as a multiset of key-value
// pairs. Replies that are not aggregates, or are null, must be identical.
func Unordered(redis, keyhive Reply) error { return unordered(redis, keyhive, 1) }

// UnorderedPairs is Unordered with consecutive elements grouped in pairs, for
// RESP2 arrays that encode a map (HGETALL, CONFIG GET).
func UnorderedPairs(redis, keyhive Reply) error { return unordered(redis, keyhive, 2) }

func unordered(a, b Reply, unit int) error {
	if !a.IsAggregate() || !b.IsAggregate() || a.Null || b.Null || a.Kind != b.Kind {
		return Exact(a, b)
	}
	if err := sameAttrs(a, b); err != nil {
		return err
	}
	if a.Kind == KindMap {
		unit = 2 // Elems interleave keys and values
	}
	if len(a.Elems)%unit != 0 || len(b.Elems)%unit != 0 {
		return fmt.Errorf("cannot compare as pairs: %d and %d elements", len(a.Elems), len(b.Elems))
	}
	onlyA := missingFrom(a.Elems, b.Elems, unit)
	onlyB := missingFrom(b.Elems, a.Elems, unit)
	if len(onlyA) == 0 && len(onlyB) == 0 {
		return nil
	}
	return fmt.Errorf("differ as multisets (%d vs %d elements); only in redis: %s; only in keyhive: %s",
		len(a.Elems), len(b.Elems), listUnits(onlyA), listUnits(onlyB))
}

// missingFrom returns the units of xs (groups of unit elements) that ys lacks,
// counting duplicates.
func missingFrom(xs, ys []Reply, unit int) []string {
	have := map[string]int{}
	for i := 0; i < len(ys); i += unit {
		have[unitKey(ys[i:i+unit])]++
	}
	var out []string
	for i := 0; i < len(xs); i += unit {
		k := unitKey(xs[i : i+unit])
		if have[k] > 0 {
			have[k]--
			continue
		}
		parts := make([]string, unit)
		for j := range unit {
			parts[j] = xs[i+j].String()
		}
		out = append(out, strings.Join(parts, " => "))
	}
	return out
}

// unitKey concatenates raw encodings; RESP is self-delimiting, so distinct
// units never collide.
func unitKey(u []Reply) string {
	var sb strings.Builder
	for _, r := range u {
		sb.Write(r.Raw)
	}
	return sb.String()
}

func listUnits(u []string) string {
	const shown = 10
	if len(u) > shown {
		return "[" + strings.Join(u[:shown], ", ") + fmt.Sprintf(", ... %d more]", len(u)-shown)
	}
	return "[" + strings.Join(u, ", ") + "]"
}

func sameAttrs(a, b Reply) error {
	if unitKey(a.Attrs) != unitKey(b.Attrs) {
		return fmt.Errorf("attributes differ")
	}
	return nil
}

// Approx returns a comparator allowing numbers to differ by up to tolerance:
// integers, doubles, and bulk strings that both parse as numbers, recursively
// inside aggregates of equal shape. Negative integers must match exactly,
// because in TTL, PTTL and EXPIRETIME they are sentinels (-1 no expiry,
// -2 no key), not durations. Everything else must be identical.
func Approx(tolerance float64) func(redis, keyhive Reply) error {
	return func(redis, keyhive Reply) error { return approx(redis, keyhive, tolerance) }
}

func approx(a, b Reply, tol float64) error {
	if a.Kind != b.Kind || a.Null != b.Null {
		return Exact(a, b)
	}
	if err := sameAttrs(a, b); err != nil {
		return err
	}
	switch a.Kind {
	case KindInt:
		if a.Int < 0 || b.Int < 0 {
			return Exact(a, b)
		}
		return near(float64(a.Int), float64(b.Int), tol)
	case KindDouble:
		return near(a.Float, b.Float, tol)
	case KindBulk:
		fa, errA := strconv.ParseFloat(a.Str, 64)
		fb, errB := strconv.ParseFloat(b.Str, 64)
		if a.Null || errA != nil || errB != nil {
			return Exact(a, b)
		}
		return near(fa, fb, tol)
	case KindArray, KindSet, KindPush, KindMap:
		if len(a.Elems) != len(b.Elems) {
			return fmt.Errorf("%d vs %d elements", len(a.Elems), len(b.Elems))
		}
		for i := range a.Elems {
			if err := approx(a.Elems[i], b.Elems[i], tol); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
		return nil
	}
	return Exact(a, b)
}

func near(x, y, tol float64) error {
	if x == y || (math.IsNaN(x) && math.IsNaN(y)) || math.Abs(x-y) <= tol {
		return nil
	}
	return fmt.Errorf("%v and %v differ by more than %v", x, y, tol)
}

// HelloCompare compares HELLO replies field by field, skipping the values of
// "id" (client ids depend on each server's connection history) and "version"
// (each server reports its own: Keyhive 7.4.1 whichever oracle it faces).
func HelloCompare(a, b Reply) error {
	if a.Kind != b.Kind || !a.IsAggregate() || a.Null || b.Null ||
		len(a.Elems) != len(b.Elems) || len(a.Elems)%2 != 0 {
		return Exact(a, b)
	}
	if err := sameAttrs(a, b); err != nil {
		return err
	}
	for i := 0; i < len(a.Elems); i += 2 {
		ka, kb := a.Elems[i], b.Elems[i]
		va, vb := a.Elems[i+1], b.Elems[i+1]
		if !ka.Equal(kb) {
			return fmt.Errorf("field %d: %s vs %s", i/2, ka, kb)
		}
		if ka.Str == "id" {
			if va.Kind != KindInt || vb.Kind != KindInt {
				return fmt.Errorf("id: %s vs %s, want integers", va, vb)
			}
			continue
		}
		if ka.Str == "version" {
			if va.Kind != KindBulk || vb.Kind != KindBulk {
				return fmt.Errorf("version: %s vs %s, want strings", va, vb)
			}
			continue
		}
		if !va.Equal(vb) {
			return fmt.Errorf("%s: %s vs %s", ka.Str, va, vb)
		}
	}
	return nil
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// quoteTrunc quotes b (%q), cut to at most limit bytes.
func quoteTrunc(b []byte, limit int) string {
	if len(b) <= limit {
		return strconv.Quote(string(b))
	}
	return strconv.Quote(string(b[:limit])) + fmt.Sprintf("...(%d bytes)", len(b))
}

// quoteAround quotes b, showing for long replies a window around offset off
// (the first difference) so huge replies stay readable.
func quoteAround(b []byte, off int) string {
	const window = 1024
	if len(b) <= window {
		return strconv.Quote(string(b))
	}
	start := max(0, min(off-window/4, len(b)-window))
	end := min(len(b), start+window)
	s := strconv.Quote(string(b[start:end]))
	if start > 0 {
		s = fmt.Sprintf("(%d bytes)...", start) + s
	}
	if end < len(b) {
		s += fmt.Sprintf("...(%d more bytes)", len(b)-end)
	}
	return s
}

// formatArgs renders a command for messages: plain words bare, anything
// else quoted, long arguments shortened.
func formatArgs(args []any) string {
	flat, err := flattenArgs(args)
	if err != nil {
		return fmt.Sprint(args...)
	}
	parts := make([]string, len(flat))
	for i, a := range flat {
		switch {
		case len(a) > 64:
			parts[i] = quoteTrunc(a, 64)
		case isPlain(a):
			parts[i] = string(a)
		default:
			parts[i] = strconv.Quote(string(a))
		}
	}
	return strings.Join(parts, " ")
}

func isPlain(a []byte) bool {
	if len(a) == 0 {
		return false
	}
	for _, c := range a {
		if c <= ' ' || c > '~' || c == '"' || c == '\\' || c == '\'' {
			return false
		}
	}
	return true
}
