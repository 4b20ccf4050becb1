// Package clock is the one source of time for a server. The real server reads
// the wall clock; an embedded or test server can use a Manual clock and move it
// forward to expire keys without sleeping.
package clock

import (
	"sync/atomic"
	"time"
)

// Clock reports the current time in Unix milliseconds.
type Clock interface {
	UnixMilli() int64
}

// Real is the wall clock.
type Real struct{}

// UnixMilli returns the wall-clock time.
func (Real) UnixMilli() int64 { return time.Now().UnixMilli() }

// Manual is a clock that moves only when told to.
type Manual struct{ ms atomic.Int64 }

// NewManual returns a Manual clock set to t.
func NewManual(t time.Time) *Manual {
	m := &Manual{}
	m.ms.Store(t.UnixMilli())
	return m
}

// UnixMilli returns the clock's time.
func (m *Manual) UnixMilli() int64 { return m.ms.Load() }

// Advance moves the clock forward by d.
func (m *Manual) Advance(d time.Duration) { m.ms.Add(d.Milliseconds()) }
