package resp

import (
	"fmt"
	"math"
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
