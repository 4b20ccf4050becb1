package resp

import (
	"fmt"
	"math"
	"math/rand"
	"strconv"
	"testing"
)

func TestAppendDoubleMatchesC(t *testing.T) {
	for _, f := range []float64{1, 0.1, 1.5, -2.25, 1e17, 1e16, 123456789012345678, 1e-5, 1e-4, 3.14159, 1e300, 5e-324, 0.30000000000000004, 100, 10.5} {
		// Go's %g and C's %g agree for these forms; the point is the exponent rule
		// and trailing-zero removal at precision 17.
		want := fmt.Sprintf("%.17g", f)
		if got := string(AppendDouble(nil, f)); got != want {
			t.Errorf("AppendDouble(%v) = %q, want %q", f, got, want)
		}
	}
	if got := string(AppendDouble(nil, math.Inf(-1))); got != "-inf" {
		t.Errorf("-inf: %q", got)
	}
}

// TestAppendDouble72 checks replies redis-server 7.4.1 gave (ZSCORE of each
// value): integers, the plain and exponent layouts, and Grisu2's digits
// where they are not the shortest (1e23, 9.0531e-17).
func TestAppendDouble72(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"64.99", "64.99"}, {"-64.99", "-64.99"}, {"0.1", "0.1"}, {"0.5", "0.5"},
		{"1e-7", "1e-7"}, {"0.000015", "0.000015"}, {"0.00012345", "1.2345e-4"},
		{"0.0012345678", "0.0012345678"}, {"1.5e-6", "1.5e-6"}, {"1.2345678", "1.2345678"},
		{"12345.678901234", "1.2345678901234e+4"},
		{"1e15", "1000000000000000"}, {"1e18", "1000000000000000000"}, {"1e19", "1e+19"},
		{"1.5e20", "1.5e+20"}, {"1e21", "1e+21"},
		{"123456789012345678", "123456789012345680"},
		{"12345678901234567000", "12345678901234567000"},
		{"4611686018427387904", "4611686018427387904"},
		{"4611686018427387904.5", "4611686018427387904"},
		{"9223372036854775807", "9223372036854776000"},
		{"1e23", "99999999999999990000000"}, {"-9.03e21", "-9030000000000001000000"},
		{"9.0531e-17", "9.053100000000001e-17"}, {"-33.97430268519037", "-33.974302685190374"},
		{"-192374981366352.87", "-192374981366352.87"},
		{"3.41749924019776e19", "34174992401977598000"},
		{"7.078942225951748e25", "7.0789422259517484e+25"},
		{"1.7976931348623157e308", "1.7976931348623157e+308"},
		{"2.2250738585072014e-308", "2.2250738585072014e-308"}, {"5e-324", "5e-324"},
		{"-0", "0"}, {"inf", "inf"}, {"-inf", "-inf"},
	} {
		f, err := strconv.ParseFloat(c.in, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(AppendDouble72(nil, f)); got != c.want {
			t.Errorf("AppendDouble72(%s) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestAppendDouble72ReadsBack: every double's text reads back to it, and
// writing one allocates nothing.
func TestAppendDouble72ReadsBack(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	buf := make([]byte, 0, 64)
	for range 100000 {
		f := math.Float64frombits(rng.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		s := AppendDouble72(buf[:0], f)
		if back, err := strconv.ParseFloat(string(s), 64); err != nil || back != f && !(back == 0 && f == 0) {
			t.Fatalf("%v: %q reads back as %v (%v)", f, s, back, err)
		}
	}
	if n := testing.AllocsPerRun(100, func() { buf = AppendDouble72(buf[:0], 64.99) }); n != 0 {
		t.Errorf("AppendDouble72 allocates %v times", n)
	}
}
