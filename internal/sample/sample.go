// Package sample draws which events of a stream are sampled, at a fixed
// rate and for a counter decrement per event not sampled: prefix
// discovery samples every client's reads and every keyspace shard's
// writes with it.
package sample

import (
	"math"
	"math/rand/v2"
)

const Rate = 64 // one event in Rate is sampled

// Sampler draws which of a stream of events are sampled, each with
// probability 1/Rate independently. Rather than a draw per event, it
// draws the gap to the next sampled event (geometric, as the gaps of
// independent draws are) and counts it down, so an event not sampled
// costs a decrement and a sampled one a logarithm. A Sampler belongs to
// one goroutine at a time (a client; a keyspace shard, under its lock);
// its zero value is ready.
//
// An event is sampled when Due and then Sampled report true: Due is the
// decrement, small enough to inline into its caller's caller, Sampled the
// rest (it must be called whenever Due reports true).
type Sampler struct {
	left int64 // events to come up to and including the next sampled one (-1: Due saw a fresh Sampler)
}

// Due counts an event and reports whether it may be sampled.
func (p *Sampler) Due() bool {
	p.left--
	return p.left <= 0
}

// Sampled reports whether the event Due let through is sampled.
func (p *Sampler) Sampled() bool {
	if p.left < 0 { // a fresh Sampler's first event: it starts a gap like any other
		p.left = gap() - 1
		if p.left > 0 {
			return false
		}
	}
	p.left = gap()
	return true
}

// logStay is log(1 - 1/Rate), the log of an event's chance not to be sampled.
var logStay = math.Log1p(-1.0 / Rate)

// gap draws the position of the next sampled event, counting from 1: k
// with probability (1-1/Rate)^(k-1)/Rate, by inverting the geometric
// distribution's tail at a uniform u in (0, 1].
func gap() int64 {
	u := 1 - rand.Float64()
	return 1 + int64(math.Log(u)/logStay)
}
