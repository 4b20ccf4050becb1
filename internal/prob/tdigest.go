package prob

import (
	"math"
	"slices"
)

// A t-digest as Redis's TDIGEST.* commands keep one: a merging digest
// (Dunning and Ertl, "Computing extremely accurate quantiles using
// t-digests"). Values are appended as unit centroids; when the node array
// (6*compression+10 nodes, as Redis sizes it) fills, every node is sorted
// and neighbours are merged while the k1 scale function,
// k(q) = compression/(2π)·asin(2q-1), says the merged centroid spans at
// most one unit of k, which keeps centroids small near the tails, so
// extreme quantiles stay accurate. Queries interpolate between centroid
// centres, treating unit centroids as exact points, and use the exact
// minimum and maximum at the ends.
//
// Layout: an 80-byte header (compression, capacity, merged and unmerged
// node counts, their weights, min, max, compressions), then capacity nodes
// of mean and weight (float64): merged nodes, sorted, then unmerged ones.
type TDigest []byte

const (
	tdHead = 80
	tdNode = 16
)

// Centroid is a t-digest node.
type Centroid struct{ Mean, Weight float64 }

// TDigestCapacity is the nodes of a digest of compression, as Redis sizes it.
func TDigestCapacity(compression int64) int { return int(6*compression + 10) }

// TDigestSize is the bytes of a digest of compression.
func TDigestSize(compression int64) int { return tdHead + TDigestCapacity(compression)*tdNode }

// InitTDigest lays out an empty digest in b, TDigestSize bytes.
func InitTDigest(b []byte, compression int64) TDigest {
	clear(b[:tdHead])
	put64(b, 0, math.Float64bits(float64(compression)))
	put32(b, 8, uint32(TDigestCapacity(compression)))
	t := TDigest(b)
	t.Reset()
	return t
}

// Reset empties the digest, keeping its compression.
func (t TDigest) Reset() {
	put32(t, 12, 0)
	put32(t, 16, 0)
	put64(t, 24, 0)
	put64(t, 32, 0)
	put64(t, 40, math.Float64bits(math.Inf(1)))
	put64(t, 48, math.Float64bits(math.Inf(-1)))
	put64(t, 56, 0)
}

func (t TDigest) f64(at int) float64 { return math.Float64frombits(u64(t, at)) }

func (t TDigest) setF64(at int, v float64) { put64(t, at, math.Float64bits(v)) }

// Compression is the digest's compression.
func (t TDigest) Compression() int64 { return int64(t.f64(0)) }

// Capacity is the digest's node array size.
func (t TDigest) Capacity() int { return int(u32(t, 8)) }

// MergedNodes is the sorted, merged centroids.
func (t TDigest) MergedNodes() int { return int(u32(t, 12)) }

// UnmergedNodes is the values added since the last compression.
func (t TDigest) UnmergedNodes() int { return int(u32(t, 16)) }

// MergedWeight is the weight of the merged centroids.
func (t TDigest) MergedWeight() float64 { return t.f64(24) }

// UnmergedWeight is the weight of the unmerged nodes.
func (t TDigest) UnmergedWeight() float64 { return t.f64(32) }

// Observations is the number of values the digest holds.
func (t TDigest) Observations() float64 { return t.MergedWeight() + t.UnmergedWeight() }

// Min is the smallest value (NaN when empty).
func (t TDigest) Min() float64 {
	if t.Observations() == 0 {
		return math.NaN()
	}
	return t.f64(40)
}

// Max is the largest value (NaN when empty).
func (t TDigest) Max() float64 {
	if t.Observations() == 0 {
		return math.NaN()
	}
	return t.f64(48)
}

// Compressions counts the compressions done.
func (t TDigest) Compressions() uint64 { return u64(t, 56) }

func (t TDigest) node(i int) Centroid {
	at := tdHead + i*tdNode
	return Centroid{t.f64(at), t.f64(at + 8)}
}

func (t TDigest) setNode(i int, c Centroid) {
	at := tdHead + i*tdNode
	t.setF64(at, c.Mean)
	t.setF64(at+8, c.Weight)
}

// Nodes appends every node, merged and unmerged, to dst.
func (t TDigest) Nodes(dst []Centroid) []Centroid {
	for i := range t.MergedNodes() + t.UnmergedNodes() {
		dst = append(dst, t.node(i))
	}
	return dst
}

// Add adds value with weight; scratch is reused for the compression a full
// node array needs, and returned.
func (t TDigest) Add(value, weight float64, scratch []Centroid) []Centroid {
	n := t.MergedNodes() + t.UnmergedNodes()
	if n >= t.Capacity() {
		scratch = t.Compress(scratch)
		n = t.MergedNodes()
	}
	t.setNode(n, Centroid{value, weight})
	put32(t, 16, uint32(t.UnmergedNodes()+1))
	t.setF64(32, t.UnmergedWeight()+weight)
	t.setF64(40, min(t.f64(40), value))
	t.setF64(48, max(t.f64(48), value))
	return scratch
}

// Compress merges every node into sorted centroids in place.
func (t TDigest) Compress(scratch []Centroid) []Centroid {
	scratch = MergeCentroids(t.Nodes(scratch[:0]), float64(t.Compression()))
	t.store(scratch)
	put64(t, 56, t.Compressions()+1)
	return scratch
}

func (t TDigest) store(cs []Centroid) {
	var w float64
	for i, c := range cs {
		t.setNode(i, c)
		w += c.Weight
	}
	put32(t, 12, uint32(len(cs)))
	put32(t, 16, 0)
	t.setF64(24, w)
	t.setF64(32, 0)
}

// SetMerged makes the digest hold the sorted, merged centroids cs (fewer
// than its capacity) with the given extremes, counting one compression.
func (t TDigest) SetMerged(cs []Centroid, lo, hi float64, compressions uint64) {
	t.store(cs)
	t.setF64(40, lo)
	t.setF64(48, hi)
	put64(t, 56, compressions)
}

func k1(q, compression float64) float64 {
	return compression / (2 * math.Pi) * math.Asin(2*q-1)
}

// MergeCentroids sorts cs by mean and merges neighbours under the k1 scale
// function at compression, in place; it returns the merged prefix.
func MergeCentroids(cs []Centroid, compression float64) []Centroid {
	if len(cs) == 0 {
		return cs
	}
	slices.SortStableFunc(cs, func(a, b Centroid) int {
		switch {
		case a.Mean < b.Mean:
			return -1
		case a.Mean > b.Mean:
			return 1
		}
		return 0
	})
	var total float64
	for _, c := range cs {
		total += c.Weight
	}
	out := 0
	cur := cs[0]
	var before float64 // weight of the centroids emitted
	kLow := k1(0, compression)
	for _, next := range cs[1:] {
		if k1(math.Min(1, (before+cur.Weight+next.Weight)/total), compression)-kLow <= 1 {
			w := cur.Weight + next.Weight
			cur.Mean += (next.Mean - cur.Mean) * next.Weight / w
			cur.Weight = w
			continue
		}
		cs[out] = cur
		out++
		before += cur.Weight
		kLow = k1(before/total, compression)
		cur = next
	}
	cs[out] = cur
	return cs[:out+1]
}

// Summary is a digest's merged form, which queries read.
type Summary struct {
	C        []Centroid
	Total    float64
	Min, Max float64
}

// Summary merges the digest's nodes into scratch (when some are unmerged;
// the value is left as it is) and returns its summary.
func (t TDigest) Summary(scratch []Centroid) Summary {
	cs := t.Nodes(scratch[:0])
	if t.UnmergedNodes() > 0 {
		cs = MergeCentroids(cs, float64(t.Compression()))
	}
	return Summary{C: cs, Total: t.Observations(), Min: t.f64(40), Max: t.f64(48)}
}

func weightedAverage(x1, w1, x2, w2 float64) float64 {
	if x1 > x2 {
		x1, w1, x2, w2 = x2, w2, x1, w1
	}
	return math.Max(x1, math.Min((x1*w1+x2*w2)/(w1+w2), x2))
}

// ValueAt is the estimated value of the observation at index (0 the
// smallest, Total-1 the largest; fractions interpolate).
func (s Summary) ValueAt(index float64) float64 {
	cs := s.C
	n := len(cs)
	switch {
	case n == 0:
		return math.NaN()
	case index < 1:
		return s.Min
	case n == 1:
		return cs[0].Mean
	}
	left := cs[0].Weight
	if left > 1 && index < left/2 {
		return s.Min + (index-1)/(left/2-1)*(cs[0].Mean-s.Min)
	}
	if index > s.Total-1 {
		return s.Max
	}
	right := cs[n-1].Weight
	if right > 1 && s.Total-index <= right/2 {
		return s.Max - (s.Total-index-1)/(right/2-1)*(s.Max-cs[n-1].Mean)
	}
	sofar := left / 2
	for i := 0; i < n-1; i++ {
		dw := (cs[i].Weight + cs[i+1].Weight) / 2
		if sofar+dw > index {
			leftUnit := 0.0
			if cs[i].Weight == 1 {
				if index-sofar < 0.5 {
					return cs[i].Mean // inside the unit centroid's own half
				}
				leftUnit = 0.5
			}
			rightUnit := 0.0
			if cs[i+1].Weight == 1 {
				if sofar+dw-index <= 0.5 {
					return cs[i+1].Mean
				}
				rightUnit = 0.5
			}
			z1 := index - sofar - leftUnit
			z2 := sofar + dw - index - rightUnit
			return weightedAverage(cs[i].Mean, z2, cs[i+1].Mean, z1)
		}
		sofar += dw
	}
	z1 := index - (s.Total - right/2)
	z2 := right/2 - z1
	return weightedAverage(cs[n-1].Mean, z1, s.Max, z2)
}

// Quantile is the estimated value at fraction q of the observations.
func (s Summary) Quantile(q float64) float64 { return s.ValueAt(q * s.Total) }

// CDF is the estimated fraction of observations below x, counting half of
// those equal to it.
func (s Summary) CDF(x float64) float64 {
	cs := s.C
	n := len(cs)
	switch {
	case n == 0:
		return math.NaN()
	case x < s.Min:
		return 0
	case x > s.Max:
		return 1
	case n == 1:
		if s.Max-s.Min == 0 {
			return 0.5
		}
		return (x - s.Min) / (s.Max - s.Min)
	}
	total := s.Total
	if first := cs[0]; x < first.Mean {
		width := first.Mean - s.Min
		if width <= 0 {
			return 0
		}
		if x == s.Min {
			return 0.5 / total
		}
		return (1 + (x-s.Min)/width*(first.Weight/2-1)) / total
	}
	if last := cs[n-1]; x > last.Mean {
		width := s.Max - last.Mean
		if width <= 0 {
			return 1
		}
		if x == s.Max {
			return 1 - 0.5/total
		}
		return 1 - (1+(s.Max-x)/width*(last.Weight/2-1))/total
	}
	var sofar float64
	for i := 0; i < n-1; i++ {
		c, next := cs[i], cs[i+1]
		switch {
		case c.Mean == x:
			var dw float64
			for ; i < n && cs[i].Mean == x; i++ {
				dw += cs[i].Weight
			}
			return (sofar + dw/2) / total
		case c.Mean < x && x < next.Mean:
			dw := (c.Weight + next.Weight) / 2
			if next.Mean-c.Mean <= 0 {
				return (sofar + dw) / total
			}
			leftOut, rightOut := 0.0, 0.0
			if c.Weight == 1 {
				if next.Weight == 1 {
					return (sofar + 1) / total // two exact points: nothing between
				}
				leftOut = 0.5
			} else if next.Weight == 1 {
				rightOut = 0.5
			}
			base := sofar + c.Weight/2 + leftOut
			return (base + (dw-leftOut-rightOut)*(x-c.Mean)/(next.Mean-c.Mean)) / total
		}
		sofar += c.Weight
	}
	return 1 - 0.5/total
}

// Rank is the estimated number of observations below x plus half of
// those equal to it: -1 below the minimum, Total above the maximum.
func (s Summary) Rank(x float64) int64 {
	switch {
	case x < s.Min:
		return -1
	case x > s.Max:
		return int64(s.Total)
	}
	return int64(math.Floor(s.CDF(x) * s.Total))
}

// RevRank is Rank counted from the largest: -1 above the maximum, Total
// below the minimum.
func (s Summary) RevRank(x float64) int64 {
	switch {
	case x > s.Max:
		return -1
	case x < s.Min:
		return int64(s.Total)
	}
	return int64(math.Floor(s.Total - s.CDF(x)*s.Total))
}

// TrimmedMean is the mean of the observations between fractions lo and hi.
func (s Summary) TrimmedMean(lo, hi float64) float64 {
	from, to := lo*s.Total, hi*s.Total
	var sum, count, at float64
	for _, c := range s.C {
		a, b := math.Max(at, from), math.Min(at+c.Weight, to)
		if b > a {
			sum += c.Mean * (b - a)
			count += b - a
		}
		at += c.Weight
		if at >= to {
			break
		}
	}
	if count == 0 {
		return math.NaN()
	}
	return sum / count
}
