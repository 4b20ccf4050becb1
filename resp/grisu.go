package resp

import (
	"math"
	"math/big"
	"math/bits"
)

// Grisu2 (Loitsch, "Printing Floating-Point Numbers Quickly and Accurately
// with Integers", PLDI 2010): the digits Redis 7.2 and later reply a double
// with. They read back to the double but are not always the shortest such
// digits (1e23 gives 99999999999999990000000, 9.0531e-17 gives
// 9.053100000000001e-17), so strconv's shortest formatting does not
// reproduce them.

// diyFp is frac·2^exp.
type diyFp struct {
	frac uint64
	exp  int
}

const (
	grisuFirstPower = -348 // the cached powers of ten: 10^-348, 10^-340, ... 10^340
	grisuPowerStep  = 8
	grisuPowers     = 87
	grisuMinExp     = -60 // a scaled number's binary exponent lies within these
	grisuMaxExp     = -32
)

// grisuCache holds 10^k for the cached k, 64-bit mantissas rounded to nearest.
var grisuCache = func() (c [grisuPowers]diyFp) {
	ten := big.NewInt(10)
	for i := range c {
		k := grisuFirstPower + i*grisuPowerStep
		p := new(big.Int).Exp(ten, big.NewInt(int64(abs(k))), nil)
		r := new(big.Rat).SetInt(p)
		if k < 0 {
			r.Inv(r)
		}
		f := new(big.Float).SetPrec(64).SetMode(big.ToNearestEven).SetRat(r)
		mant := new(big.Float)
		exp := f.MantExp(mant) // f = mant·2^exp, mant in [0.5, 1)
		m, _ := mant.SetMantExp(mant, 64).Uint64()
		c[i] = diyFp{m, exp - 64}
	}
	return c
}()

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// grisuMul is a·b rounded to the upper 64 bits of the product.
func grisuMul(a, b diyFp) diyFp {
	hi, lo := bits.Mul64(a.frac, b.frac)
	hi += lo >> 63 // round half up
	return diyFp{hi, a.exp + b.exp + 64}
}

// grisu2 appends the digits of f (finite, positive) to b and returns them
// with the power of ten of the last digit.
func grisu2(b []byte, f float64) ([]byte, int) {
	u := math.Float64bits(f)
	w := diyFp{u & (1<<52 - 1), int(u>>52) - 1075}
	if u>>52 != 0 {
		w.frac |= 1 << 52
	} else {
		w.exp = -1074
	}
	// The boundaries halfway to the neighbouring doubles, normalized to a
	// common exponent.
	upper := diyFp{w.frac<<1 + 1, w.exp - 1}
	shift := bits.LeadingZeros64(upper.frac)
	upper.frac <<= shift
	upper.exp -= shift
	lower := diyFp{w.frac<<1 - 1, w.exp - 1}
	if w.frac == 1<<52 {
		lower = diyFp{w.frac<<2 - 1, w.exp - 2}
	}
	lower.frac <<= lower.exp - upper.exp
	lower.exp = upper.exp
	shift = bits.LeadingZeros64(w.frac)
	w.frac <<= shift
	w.exp -= shift

	// The cached power that brings upper's exponent within the range,
	// searched from an estimate.
	i := (int(-float64(upper.exp+grisuPowers)*0.30102999566398114) - grisuFirstPower) / grisuPowerStep
	for {
		e := upper.exp + grisuCache[i].exp + 64
		if e < grisuMinExp {
			i++
		} else if e > grisuMaxExp {
			i--
		} else {
			break
		}
	}
	c := grisuCache[i]
	k := -(grisuFirstPower + i*grisuPowerStep)
	w, upper, lower = grisuMul(w, c), grisuMul(upper, c), grisuMul(lower, c)
	lower.frac++
	upper.frac--
	return grisuDigits(b, w, upper, lower, k)
}

// grisuDigits generates the digits of upper until they are within the
// boundaries, then moves the last one towards w.
func grisuDigits(b []byte, w, upper, lower diyFp, k int) ([]byte, int) {
	wfrac := upper.frac - w.frac
	delta := upper.frac - lower.frac
	shift := uint(-upper.exp)
	one := uint64(1) << shift
	part1 := upper.frac >> shift
	part2 := upper.frac & (one - 1)
	start := len(b)
	kappa := 10
	for div := uint64(1e9); kappa > 0; div /= 10 {
		digit := part1 / div
		if digit != 0 || len(b) > start {
			b = append(b, byte('0'+digit))
		}
		part1 -= digit * div
		kappa--
		if rest := part1<<shift + part2; rest <= delta {
			grisuRound(b[start:], delta, rest, div<<shift, wfrac)
			return b, k + kappa
		}
	}
	for unit := uint64(10); ; unit *= 10 {
		part2 *= 10
		delta *= 10
		kappa--
		digit := part2 >> shift
		if digit != 0 || len(b) > start {
			b = append(b, byte('0'+digit))
		}
		part2 &= one - 1
		if part2 < delta {
			grisuRound(b[start:], delta, part2, one, wfrac*unit)
			return b, k + kappa
		}
	}
}

// grisuRound lowers the last digit while that brings the number closer to
// w (wfrac below upper) and keeps it within the boundaries (delta).
func grisuRound(digits []byte, delta, rest, step, wfrac uint64) {
	for rest < wfrac && delta-rest >= step && (rest+step < wfrac || wfrac-rest > rest+step-wfrac) {
		digits[len(digits)-1]--
		rest += step
	}
}
