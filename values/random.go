package values

import (
	"math/rand/v2"

	"github.com/keyhive/keyhive/internal/bytemap"
)

// eachDistinct calls fn for count distinct random positions of a collection
// of n elements (count < n), as Redis draws distinct random elements: by a
// partial Fisher-Yates shuffle of all the positions (positions) when count
// is a good part of n or the collection has no random position of its own
// (random is nil), else by drawing random positions and rejecting repeats.
func eachDistinct(count, n int, positions func() []int, random func() int, fn func(pos int)) {
	if random == nil || count*3 > n {
		pos := positions()
		for i := range count {
			j := i + rand.IntN(len(pos)-i)
			pos[i], pos[j] = pos[j], pos[i]
			fn(pos[i])
		}
		return
	}
	seen := make(map[int]struct{}, count)
	for len(seen) < count {
		p := random()
		if _, dup := seen[p]; dup {
			continue
		}
		seen[p] = struct{}{}
		fn(p)
	}
}

// indices returns 0 to n-1, the positions of a collection indexed by rank.
func indices(n int) []int {
	pos := make([]int, n)
	for i := range pos {
		pos[i] = i
	}
	return pos
}

// mapPositions returns the positions of a bytemap's fields.
func mapPositions(m *bytemap.Map) []int {
	pos := make([]int, 0, m.Len())
	for p := m.Next(0); p >= 0; p = m.Next(p + 1) {
		pos = append(pos, p)
	}
	return pos
}
