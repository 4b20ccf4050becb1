package geohash

import "math"

// Redis computes distances with glibc's sin, cos and asin, which round
// correctly in practice; Go's math functions are often one bit off, which
// shows in STOREDIST scores and can move a point across a radius. These
// versions evaluate in double-double arithmetic (about 106 bits) and round
// once, so they give the correctly rounded result.

// dd is an unevaluated sum hi+lo with |lo| <= ulp(hi)/2.
type dd struct{ hi, lo float64 }

func twoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

func quickTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func twoProd(a, b float64) dd {
	p := a * b
	return dd{p, math.FMA(a, b, -p)}
}

func (a dd) add(b dd) dd {
	s := twoSum(a.hi, b.hi)
	t := twoSum(a.lo, b.lo)
	s.lo += t.hi
	s = quickTwoSum(s.hi, s.lo)
	s.lo += t.lo
	return quickTwoSum(s.hi, s.lo)
}

func (a dd) neg() dd { return dd{-a.hi, -a.lo} }

func (a dd) mul(b dd) dd {
	p := twoProd(a.hi, b.hi)
	p.lo += a.hi*b.lo + a.lo*b.hi
	return quickTwoSum(p.hi, p.lo)
}

func (a dd) mulF(b float64) dd {
	p := twoProd(a.hi, b)
	p.lo += a.lo * b
	return quickTwoSum(p.hi, p.lo)
}

func (a dd) div(b dd) dd {
	q1 := a.hi / b.hi
	r := a.add(b.mulF(q1).neg())
	q2 := r.hi / b.hi
	r = r.add(b.mulF(q2).neg())
	q3 := r.hi / b.hi
	return quickTwoSum(q1, q2).add(dd{q3, 0})
}

// π/2 as a sum of three doubles.
var piOver2 = [3]float64{1.5707963267948966, 6.123233995736766e-17, -1.4973849048591698e-33}

// invFact[i] is 1/i! in double-double, for the Taylor series.
var invFact = func() (f [27]dd) {
	f[0] = dd{1, 0}
	for i := 1; i < len(f); i++ {
		f[i] = f[i-1].div(dd{float64(i), 0})
	}
	return f
}()

// reduce returns r = x - k·π/2 with |r| <= π/4, and k mod 4.
func reduce(x dd) (dd, int) {
	k := math.Round(x.hi / piOver2[0])
	r := x.add(twoProd(-k, piOver2[0])).add(twoProd(-k, piOver2[1])).add(dd{-k * piOver2[2], 0})
	return r, int(k) & 3
}

// sinSeries and cosSeries are the Taylor series on |r| <= π/4 up to the
// 25th power (the truncation error, below 2e-28, is far under a double's last
// bit). Only the first four terms need double-double: the rest add up to
// less than 1e-4 of the result, so their rounding errors in float64 stay
// below 1e-20 of it.
func sinSeries(r, r2 dd) dd {
	// r·(1/1! - r²·(1/3! - r²·(1/5! - ...)))
	t := invFact[25].hi
	for i := 23; i >= 9; i -= 2 {
		t = invFact[i].hi - t*r2.hi
	}
	p := dd{t, 0}
	for i := 7; i >= 1; i -= 2 {
		p = invFact[i].add(p.mul(r2).neg())
	}
	return p.mul(r)
}

func cosSeries(r2 dd) dd {
	t := invFact[26].hi
	for i := 24; i >= 8; i -= 2 {
		t = invFact[i].hi - t*r2.hi
	}
	p := dd{t, 0}
	for i := 6; i >= 0; i -= 2 {
		p = invFact[i].add(p.mul(r2).neg())
	}
	return p
}

// sinDD is the sine of x, |x| up to a few π.
func sinDD(x dd) dd {
	r, k := reduce(x)
	r2 := r.mul(r)
	switch k {
	case 0:
		return sinSeries(r, r2)
	case 1:
		return cosSeries(r2)
	case 2:
		return sinSeries(r, r2).neg()
	}
	return cosSeries(r2).neg()
}

// reducible bounds the arguments reduce handles accurately; searches use
// larger ones only with huge radii, where the precision does not matter.
const reducible = 8

// sin is the correctly rounded sine.
func sin(x float64) float64 {
	if !(math.Abs(x) <= reducible) {
		return math.Sin(x)
	}
	v := sinDD(dd{x, 0})
	return v.hi + v.lo
}

// cos is the correctly rounded cosine.
func cos(x float64) float64 {
	if !(math.Abs(x) <= reducible) {
		return math.Cos(x)
	}
	r, k := reduce(dd{x, 0})
	r2 := r.mul(r)
	var v dd
	switch k {
	case 0:
		v = cosSeries(r2)
	case 1:
		v = sinSeries(r, r2).neg()
	case 2:
		v = cosSeries(r2).neg()
	default:
		v = sinSeries(r, r2)
	}
	return v.hi + v.lo
}

// asin is the correctly rounded arcsine on [-1, 1]: Go's estimate refined by
// Newton steps on sin(x) = y in double-double.
func asin(y float64) float64 {
	if y == 0 || !(math.Abs(y) < 1) {
		return math.Asin(y) // ±0, ±π/2, NaN beyond
	}
	// Newton's step on sin(x) = y squares the error of Go's estimate; the
	// correction is tiny, so only sin(x) needs double-double. Near ±1, where
	// the slope of sin flattens, a second step.
	x := dd{math.Asin(y), 0}
	for i := 0; i < 1 || (i < 2 && math.Abs(y) > 0.99); i++ {
		s := sinDD(x)
		x = x.add(dd{(dd{y, 0}.add(s.neg()).hi) / math.Cos(x.hi), 0})
	}
	return x.hi + x.lo
}
