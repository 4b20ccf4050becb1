package sample

import (
	"math"
	"testing"
)

// within reports whether got sampled events of n trials at probability p
// lie within five standard deviations of the expectation.
func within(got, n int, p float64) bool {
	want := float64(n) * p
	return math.Abs(float64(got)-want) <= 5*math.Sqrt(want*(1-p))
}

// TestSamplerRate checks that a Sampler samples one event in Rate, each
// event independently of the one before: an event right after a sampled
// one is sampled at the same rate, and the gaps between sampled events
// have the geometric tail P(gap > k) = (1-1/Rate)^k.
func TestSamplerRate(t *testing.T) {
	const n = 1 << 22
	var draw Sampler
	sampled, afterSampled, afterCount := 0, 0, 0
	prev := false
	gaps, since := map[int]int{}, 0
	for range n {
		hit := draw.Due() && draw.Sampled()
		if prev {
			afterCount++
			if hit {
				afterSampled++
			}
		}
		since++
		if hit {
			sampled++
			gaps[since]++
			since = 0
		}
		prev = hit
	}
	if !within(sampled, n, 1.0/Rate) {
		t.Errorf("%d sampled of %d, want about %d", sampled, n, n/Rate)
	}
	if !within(afterSampled, afterCount, 1.0/Rate) {
		t.Errorf("%d sampled of the %d events after a sampled one, want about %d", afterSampled, afterCount, afterCount/Rate)
	}
	for _, k := range []int{1, Rate / 2, Rate, 3 * Rate} {
		longer := 0
		for g, c := range gaps {
			if g > k {
				longer += c
			}
		}
		if !within(longer, sampled, math.Pow(1-1.0/Rate, float64(k))) {
			t.Errorf("%d of %d gaps longer than %d, want %.0f", longer, sampled, k, float64(sampled)*math.Pow(1-1.0/Rate, float64(k)))
		}
	}
}

// TestFreshSamplerRate checks that a new Sampler's first event is sampled
// at the rate too (a client that sends one command is not always counted).
func TestFreshSamplerRate(t *testing.T) {
	const n = 1 << 18
	first := 0
	for range n {
		var draw Sampler
		if draw.Due() && draw.Sampled() {
			first++
		}
	}
	if !within(first, n, 1.0/Rate) {
		t.Errorf("%d first events sampled of %d, want about %d", first, n, n/Rate)
	}
}
