// Package glob matches Redis glob-style patterns (KEYS, SCAN MATCH, PSUBSCRIBE,
// CONFIG GET) with the semantics of Redis's stringmatchlen, including its quirks:
// an empty string matches only an empty pattern, an unterminated class ends at the
// end of the pattern, and "[a-]" is the range a..']'.
//
// Unlike a recursive matcher, Match backtracks only to the last '*', so a hostile
// pattern costs at most O(len(pattern) * len(s)).
package glob

// Match reports whether s matches pattern. With nocase, ASCII letters compare
// case-insensitively.
func Match(pattern, s []byte, nocase bool) bool {
	if len(s) == 0 {
		return len(pattern) == 0
	}
	p, i := 0, 0
	starP, starI := -1, 0
	for i < len(s) {
		if p < len(pattern) && pattern[p] == '*' {
			for p < len(pattern) && pattern[p] == '*' {
				p++
			}
			if p == len(pattern) {
				return true
			}
			starP, starI = p, i
			continue
		}
		if p < len(pattern) {
			if ok, next := matchOne(pattern, p, s[i], nocase); ok {
				p, i = next, i+1
				continue
			}
		}
		if starP < 0 {
			return false
		}
		// Let the last '*' absorb one more byte and retry from there.
		starI++
		p, i = starP, starI
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// MatchString is Match for strings, without copying.
func MatchString(pattern, s string, nocase bool) bool {
	return Match([]byte(pattern), []byte(s), nocase)
}

// matchOne matches the single-byte token at pattern[p] against c and returns the
// index after the token. The token's extent depends only on the pattern.
func matchOne(pattern []byte, p int, c byte, nocase bool) (bool, int) {
	switch pattern[p] {
	case '?':
		return true, p + 1
	case '[':
		return matchClass(pattern, p+1, c, nocase)
	case '\\':
		if p+1 < len(pattern) {
			p++
		}
	}
	return equal(pattern[p], c, nocase), p + 1
}

func matchClass(pattern []byte, p int, c byte, nocase bool) (bool, int) {
	negate := p < len(pattern) && pattern[p] == '^'
	if negate {
		p++
	}
	matched := false
	for p < len(pattern) {
		switch {
		case pattern[p] == '\\' && p+1 < len(pattern):
			p++
			matched = matched || equal(pattern[p], c, nocase)
		case pattern[p] == ']':
			return matched != negate, p + 1
		case p+2 < len(pattern) && pattern[p+1] == '-':
			lo, hi := pattern[p], pattern[p+2]
			if lo > hi {
				lo, hi = hi, lo
			}
			x := c
			if nocase {
				lo, hi, x = lower(lo), lower(hi), lower(x)
			}
			matched = matched || (x >= lo && x <= hi)
			p += 2
		default:
			matched = matched || equal(pattern[p], c, nocase)
		}
		p++
	}
	// Unterminated class: it ends with the pattern.
	return matched != negate, p
}

func equal(a, b byte, nocase bool) bool {
	return a == b || nocase && lower(a) == lower(b)
}

func lower(b byte) byte {
	if b >= 'A' && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}
