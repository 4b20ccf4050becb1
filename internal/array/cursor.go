package array

// The insert cursor's commands: ARINSERT appends at it, ARRING keeps a ring
// of a given size with it, ARLASTITEMS walks back from it.

// Insert stores vs at the cursor and the indexes after it and returns the
// last index used; ok=false, with nothing stored, when they would pass
// MaxIndex.
func (a *Array) Insert(vs [][]byte) (last uint64, ok bool) {
	if a.next == Exhausted || uint64(len(vs)-1) > MaxIndex-a.next {
		return 0, false
	}
	for k, v := range vs {
		a.Set(a.next+uint64(k), v)
	}
	last = a.next + uint64(len(vs)) - 1
	a.next = last + 1
	return last, true
}

// Ring stores each of vs at the cursor modulo size (size > 0), the cursor
// moving on past it, and returns the last index used. An array longer than
// size is first reshaped to the ring: its most recent elements, up to size
// of them and back to the first empty slot, laid out oldest first from
// index 0, the cursor after them.
func (a *Array) Ring(size uint64, vs [][]byte) uint64 {
	if a.Len() > size {
		a.reshape(size)
	}
	var last uint64
	for _, v := range vs {
		last = a.next % size
		a.Set(last, v)
		a.next = last + 1
	}
	return last
}

// reshape keeps the most recent elements that fit a ring of size.
func (a *Array) reshape(size uint64) {
	var keep [][]byte // most recent first
	a.walkBack(size, func(i uint64) bool {
		v, ok := a.Get(i)
		if ok {
			keep = append(keep, append([]byte(nil), v...))
		}
		return ok
	})
	*a = Array{}
	for k := range keep {
		a.Set(uint64(k), keep[len(keep)-1-k])
	}
	a.next = uint64(len(keep))
}

// LastItems calls fn with the count slots before the cursor, most recent
// first, wrapping from index 0 to the last index, each slot at most once:
// its value, or nil when empty.
func (a *Array) LastItems(count uint64, fn func(v []byte, ok bool)) {
	a.walkBack(count, func(i uint64) bool {
		v, ok := a.Get(i)
		fn(v, ok)
		return true
	})
}

// walkBack calls fn with up to n indexes from the one before the cursor
// backward (from the last index when the cursor is at 0 or past the
// array), wrapping from 0 to Len()-1, each index at most once, until fn
// returns false.
func (a *Array) walkBack(n uint64, fn func(i uint64) bool) {
	l := a.Len()
	if l == 0 {
		return
	}
	i := l - 1
	if a.next >= 1 && a.next-1 < l {
		i = a.next - 1
	}
	for range min(n, l) {
		if !fn(i) {
			return
		}
		if i == 0 {
			i = l
		}
		i--
	}
}
