// Package sample draws which events of a stream are sampled, at a fixed
// rate and for little more than a shift per event: prefix discovery
// samples every client's reads and every keyspace shard's writes with it.
package sample

import "math/rand/v2"

const (
	Rate = 16 // one event in Rate is sampled
	Bits = 4  // log2(Rate)
)

// Sampler draws which of a stream of events are sampled, each with
// probability 1/Rate independently: one random number's nibbles decide
// the next 15 events (a zero nibble: sampled), so a stream costs a random
// number per 15 events rather than one each. A Sampler belongs to one
// goroutine at a time (a client; a keyspace shard, under its lock); its
// zero value is ready.
type Sampler struct {
	bits uint64 // the draws left above a marker bit: 1 or 0 when none
}

// Sample reports whether the next event is sampled.
func (p *Sampler) Sample() bool {
	if p.bits <= 1 {
		p.refill()
	}
	hit := p.bits&(Rate-1) == 0
	p.bits >>= Bits
	return hit
}

// refill is not inlined so that Sample is.
//
//go:noinline
func (p *Sampler) refill() { p.bits = rand.Uint64()>>Bits | 1<<(64-Bits) }
