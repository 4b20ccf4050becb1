package sample

import (
	"math"
	"testing"
)

// TestSamplerRate checks that a Sampler samples one event in Rate, and
// each event alike: the draws of every position within a random number's
// 15 are counted apart.
func TestSamplerRate(t *testing.T) {
	const n = 15 * 1 << 16
	var draw Sampler
	var byPos [15]int
	for i := range n {
		if draw.Sample() {
			byPos[i%15]++
		}
	}
	want := float64(n/15) / Rate
	for pos, got := range byPos {
		if math.Abs(float64(got)-want) > 5*math.Sqrt(want) {
			t.Errorf("position %d: %d sampled of %d, want about %.0f", pos, got, n/15, want)
		}
	}
}
