package prob

import "math"

// The checks of a value read from a file or a RESTORE payload: every
// offset a view computes must fall inside its bytes.

// ValidBloom reports whether b is a whole Bloom filter.
func ValidBloom(b []byte) bool {
	if len(b) < bloomHead {
		return false
	}
	n := int(u32(b, 0))
	if n < 1 || n > bloomMaxFilter || len(b) < bloomHead+n*bloomFiltHead {
		return false
	}
	h := append([]byte(nil), b[:bloomHead]...)
	at := bloomHead
	for range n {
		if at+bloomFiltHead > len(b) {
			return false
		}
		h = append(h, b[at:at+bloomFiltHead]...)
		bits := u64(b, at+bfBits)
		if bits > uint64(len(b))*8 {
			return false
		}
		at += bloomFiltHead + int(bits/8)
	}
	size, ok := BloomFromHeader(h)
	return ok && size == len(b)
}

// ValidCuckoo reports whether b is a whole Cuckoo filter.
func ValidCuckoo(b []byte) bool {
	if len(b) < cuckooHead {
		return false
	}
	size, ok := CuckooFromHeader(b[:cuckooHead])
	return ok && size == len(b) && Cuckoo(b).Items() <= uint64(len(b))
}

// ValidCMS reports whether b is a whole Count-Min sketch.
func ValidCMS(b []byte) bool {
	if len(b) < cmsHead {
		return false
	}
	s := CMS(b)
	w, d := s.Width(), s.Depth()
	return w >= 1 && d >= 1 && w*d <= uint64(len(b)) && CMSSize(w, d) == len(b)
}

// ValidTopK reports whether b is a whole Top-K.
func ValidTopK(b []byte) bool {
	if len(b) < topkHead {
		return false
	}
	t := TopK(b)
	k, w, d := uint64(t.K()), t.Width(), t.Depth()
	if k < 1 || w < 1 || d < 1 || w*d > uint64(len(b)) || k > uint64(len(b)) || uint64(t.Listed()) > k {
		return false
	}
	if decay := t.Decay(); !(decay > 0 && decay <= 1) || TopKSize(k, w, d) > len(b) {
		return false
	}
	names := TopKSize(k, w, d)
	for i := range t.Listed() {
		names += int(u32(b, t.slot(i)+8))
		if names > len(b) {
			return false
		}
	}
	return names == len(b)
}

// ValidTDigest reports whether b is a whole t-digest.
func ValidTDigest(b []byte) bool {
	if len(b) < tdHead {
		return false
	}
	t := TDigest(b)
	c := t.f64(0)
	if !(c >= 1 && c <= 1<<30) || c != math.Trunc(c) || TDigestSize(int64(c)) != len(b) || t.Capacity() != TDigestCapacity(int64(c)) {
		return false
	}
	return t.MergedNodes()+t.UnmergedNodes() <= t.Capacity()
}
