package prob

import (
	"errors"
	"math"
)

// A Count-Min sketch as Redis's CMS.* commands keep one: depth rows of
// width 32-bit counters; an item adds to one counter per row and its
// estimate is the smallest of them, never below its true count. With
// width w the expected excess per row is at most N/w (N the total
// counted), so by Markov an estimate exceeds it by more than 2N/w with
// probability at most 2^-depth: INITBYPROB's width ceil(2/error) and
// depth ceil(log2(1/probability)) give that bound.
//
// Layout: width, depth (uint32), the total count (uint64), then the
// counters row by row.
type CMS []byte

const cmsHead = 16

// ErrCMSOverflow is an increment that would pass a counter's 32 bits.
var ErrCMSOverflow = errors.New("CMS: INCRBY overflow")

// CMSDims is INITBYPROB's width and depth for an overestimate of error
// (a fraction of the total) with probability of failure probability.
func CMSDims(errorRate, probability float64) (width, depth uint64) {
	return uint64(math.Ceil(2 / errorRate)), uint64(math.Ceil(math.Log10(probability) / math.Log10(0.5)))
}

// CMSSize is the bytes of a sketch of width by depth.
func CMSSize(width, depth uint64) int { return cmsHead + int(width*depth)*4 }

// InitCMS lays out a new sketch in b, CMSSize bytes of zeros.
func InitCMS(b []byte, width, depth uint64) CMS {
	put32(b, 0, uint32(width))
	put32(b, 4, uint32(depth))
	return CMS(b)
}

// Width is the counters per row.
func (s CMS) Width() uint64 { return uint64(u32(s, 0)) }

// Depth is the rows.
func (s CMS) Depth() uint64 { return uint64(u32(s, 4)) }

// Count is the sum of every increment.
func (s CMS) Count() uint64 { return u64(s, 8) }

func (s CMS) cell(p pair, row uint64) int {
	return cmsHead + int(row*s.Width()+mix64(p.at(row))%s.Width())*4
}

// Query is item's estimated count.
func (s CMS) Query(item []byte) uint64 {
	p := hashPair(item)
	est := uint64(math.MaxUint32)
	for row := range s.Depth() {
		est = min(est, uint64(u32(s, s.cell(p, row))))
	}
	return est
}

// CanIncr reports whether adding by to item keeps every counter and the
// total within their sizes.
func (s CMS) CanIncr(item []byte, by uint64) bool {
	p := hashPair(item)
	if s.Count()+by < s.Count() {
		return false
	}
	for row := range s.Depth() {
		if uint64(u32(s, s.cell(p, row)))+by > math.MaxUint32 {
			return false
		}
	}
	return true
}

// Incr adds by to item (CanIncr said it fits) and returns its estimate.
func (s CMS) Incr(item []byte, by uint64) uint64 {
	p := hashPair(item)
	est := uint64(math.MaxUint32)
	for row := range s.Depth() {
		at := s.cell(p, row)
		v := uint64(u32(s, at)) + by
		put32(s, at, uint32(v))
		est = min(est, v)
	}
	put64(s, 8, s.Count()+by)
	return est
}

// Merge sets s to the sum of srcs weighted by weights (all of s's
// dimensions), reporting false, with s unchanged, when a counter would
// pass 32 bits or fall below zero.
func (s CMS) Merge(srcs []CMS, weights []int64) bool {
	cells := int(s.Width() * s.Depth())
	var total int64
	for i, src := range srcs {
		total += int64(src.Count()) * weights[i]
	}
	if total < 0 {
		return false
	}
	for c := range cells {
		var v int64
		for i, src := range srcs {
			v += int64(u32(src, cmsHead+c*4)) * weights[i]
		}
		if v < 0 || v > math.MaxUint32 {
			return false
		}
	}
	for c := range cells {
		var v int64
		for i, src := range srcs {
			v += int64(u32(src, cmsHead+c*4)) * weights[i]
		}
		put32(s, cmsHead+c*4, uint32(v))
	}
	put64(s, 8, uint64(total))
	return true
}
