// Package strnum converts between bytes and numbers with Redis's rules, which are
// stricter than strconv's: no '+' sign, no leading zeros, no spaces.
package strnum

import (
	"bytes"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// ParseInt parses a signed 64-bit decimal integer as Redis's string2ll does.
func ParseInt(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 20 {
		return 0, false
	}
	if len(b) == 1 && b[0] == '0' {
		return 0, true
	}
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || b[0] < '1' || b[0] > '9' {
		return 0, false
	}
	v, ok := digits(b)
	if !ok {
		return 0, false
	}
	if neg {
		if v > 1<<63 {
			return 0, false
		}
		return -int64(v), true
	}
	if v > math.MaxInt64 {
		return 0, false
	}
	return int64(v), true
}

// ParseCursor parses a SCAN cursor as Redis 7.2 and later do. The cursor
// ends at a NUL byte. A negative integer in canonical form (as ParseInt
// takes it) is invalid; anything else follows strtoull: leading white space,
// an optional sign (a negative cursor wraps around), at least one decimal
// digit and nothing after, no overflow.
func ParseCursor(b []byte) (uint64, bool) {
	if n := bytes.IndexByte(b, 0); n >= 0 {
		b = b[:n]
	}
	if v, ok := ParseInt(b); ok {
		return uint64(v), v >= 0
	}
	for len(b) > 0 && isCSpace(b[0]) {
		b = b[1:]
	}
	neg := len(b) > 0 && b[0] == '-'
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, false
	}
	v, ok := digits(b)
	if neg {
		v = -v
	}
	return v, ok
}

// isCSpace reports whether c is white space as C's isspace has it.
func isCSpace(c byte) bool {
	return c == ' ' || c >= '\t' && c <= '\r'
}

// digits parses a run of decimal digits, failing on anything else or on
// overflow of 64 bits.
func digits(b []byte) (uint64, bool) {
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// exactPow10 are the powers of ten a float64 holds exactly.
var exactPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// PlainDecimal parses the common case of a decimal number, an optional sign,
// digits and an optional fraction ("-12", "3.25", "000123"), when its value
// is exact: the digits fit in 53 bits and the fraction has at most 22
// places, so one correctly rounded division gives strtod's result. ok is
// false for anything else (exponents, inf, hex, more digits, junk), which
// callers parse the general way; strconv.ParseFloat costs several hundred
// instructions even for "1".
func PlainDecimal(b []byte) (f float64, ok bool) {
	i, neg := 0, false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg, i = b[0] == '-', 1
	}
	var m uint64
	digits, frac, point := 0, 0, false
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			if m > 1<<53/10 {
				return 0, false
			}
			m = m*10 + uint64(c-'0')
			digits++
			if point {
				frac++
			}
		case c == '.' && !point:
			point = true
		default:
			return 0, false
		}
	}
	if digits == 0 || m > 1<<53 || frac >= len(exactPow10) {
		return 0, false
	}
	f = float64(m) / exactPow10[frac]
	if neg {
		f = -f
	}
	return f, true
}

// ParseFloat parses a double as Redis's string-to-long-double rules do for
// INCRBYFLOAT and friends: no surrounding spaces, NaN rejected.
func ParseFloat(b []byte) (float64, bool) {
	if f, ok := PlainDecimal(b); ok {
		return f, true
	}
	if len(b) == 0 || isSpace(b[0]) || isSpace(b[len(b)-1]) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		// strtold accepts hex floats and out-of-range values saturate to inf
		// (which callers reject); strconv reports both as errors.
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return f, true
		}
		return 0, false
	}
	if math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// Redis does INCRBYFLOAT and HINCRBYFLOAT in C's long double (x87 extended:
// 64-bit mantissa, 15-bit exponent) and prints the result with "%.17Lf", so
// "10.5" + "0.1" gives "10.6". big.Float at 64 bits of precision reproduces that
// arithmetic exactly.
const (
	longDoublePrec   = 64
	longDoubleMaxExp = 16384  // beyond this the value is inf in long double
	longDoubleMinExp = -16444 // below this a literal underflows to 0 (ERANGE)
	longDoubleMaxLen = 5 * 1024
)

// ParseLongDouble parses b as strtold would for Redis (no leading space, whole
// string consumed, NaN rejected).
func ParseLongDouble(b []byte) (*big.Float, bool) {
	if len(b) == 0 || len(b) >= longDoubleMaxLen || isSpace(b[0]) {
		return nil, false
	}
	s := string(b)
	lower := strings.ToLower(strings.TrimLeft(s, "+-"))
	if lower == "inf" || lower == "infinity" {
		return new(big.Float).SetInf(s[0] == '-'), true
	}
	if strings.ContainsAny(s, "_ \t\n") || strings.HasPrefix(lower, "0b") || strings.HasPrefix(lower, "0o") {
		return nil, false // Go syntax that strtold does not accept
	}
	f, _, err := big.ParseFloat(s, 0, longDoublePrec, big.ToNearestEven)
	if err != nil {
		return nil, false
	}
	// strtold reports ERANGE when a literal overflows or underflows to zero,
	// and Redis then rejects it; a literal "inf" is accepted.
	if e := f.MantExp(nil); f.IsInf() || e > longDoubleMaxExp || (f.Sign() != 0 && e < longDoubleMinExp) {
		return nil, false
	}
	return f, true
}

// AddLongDouble returns a+b formatted as Redis stores the result of
// INCRBYFLOAT, or false when the result is not finite.
func AddLongDouble(a, b *big.Float) ([]byte, bool) {
	if a.IsInf() || b.IsInf() {
		return nil, false
	}
	sum := new(big.Float).SetPrec(longDoublePrec).SetMode(big.ToNearestEven).Add(a, b)
	if sum.MantExp(nil) > longDoubleMaxExp {
		return nil, false
	}
	out := sum.Append(nil, 'f', 17)
	if bytes.IndexByte(out, '.') >= 0 {
		out = bytes.TrimRight(out, "0")
		out = bytes.TrimSuffix(out, []byte("."))
	}
	if string(out) == "-0" {
		out = []byte("0")
	}
	return out, true
}

// ParseULL parses an unsigned 64-bit integer as Redis's string2ull does: a
// string2ll integer that is not negative, or else whatever strtoull consumes
// whole (leading spaces, a sign, a negative value wrapping around), as stream
// IDs are parsed.
func ParseULL(b []byte) (uint64, bool) {
	if v, ok := ParseInt(b); ok {
		return uint64(v), v >= 0
	}
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	neg := i < len(b) && b[i] == '-'
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		i++
	}
	if i == len(b) {
		return 0, false
	}
	v, ok := digits(b[i:])
	if neg {
		v = -v
	}
	return v, ok
}

// ParseMemory follows Redis's memtoull, which the config, DEBUG POPULATE
// and namespaces' MAX-MEMORY share: an optional run of digits and an optional unit (b, k, kb, m, mb, g,
// gb; any case; k=1000, kb=1024). An empty digit run means 0, a run of 128
// digits or more is an error, a too-large number saturates and the unit
// multiplication wraps, exactly as the C code behaves.
func ParseMemory(s string) (uint64, bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	var mul uint64
	switch strings.ToLower(s[i:]) {
	case "", "b":
		mul = 1
	case "k":
		mul = 1000
	case "kb":
		mul = 1024
	case "m":
		mul = 1000 * 1000
	case "mb":
		mul = 1024 * 1024
	case "g":
		mul = 1000 * 1000 * 1000
	case "gb":
		mul = 1024 * 1024 * 1024
	default:
		return 0, false
	}
	if i >= 128 {
		return 0, false
	}
	var v uint64
	if i > 0 {
		var err error
		v, err = strconv.ParseUint(s[:i], 10, 64)
		if err != nil {
			v = math.MaxUint64 // strtoull saturates on overflow
		}
	}
	return v * mul, true
}
