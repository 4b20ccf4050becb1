package values

import (
	"math/rand/v2"

	"github.com/keyhive/keyhive/internal/zset"
	"github.com/keyhive/keyhive/keyspace"
)

// ZSetObject is the large form of a sorted set (OBJECT ENCODING skiplist),
// stored as a keyspace object. Small sorted sets are inline compact bytes.
type ZSetObject struct{ zset.Tree }

func (z *ZSetObject) Clone() keyspace.Object { return &ZSetObject{*z.Tree.Clone()} }

// ZSetView is a stored sorted set in either form: Obj when large, else LP.
type ZSetView struct {
	LP  []byte
	Obj *ZSetObject
}

// ViewZSet reads a sorted set entry.
func ViewZSet(e *keyspace.Entry) ZSetView {
	if o := e.Object(); o != nil {
		return ZSetView{Obj: o.(*ZSetObject)}
	}
	return ZSetView{LP: e.Value()}
}

func (z ZSetView) Len() int {
	if z.Obj != nil {
		return z.Obj.Len()
	}
	return zset.Len(z.LP)
}

func (z ZSetView) Score(member []byte) (float64, bool) {
	if z.Obj != nil {
		return z.Obj.Score(member)
	}
	s, _, ok := zset.Find(z.LP, member)
	return s, ok
}

func (z ZSetView) Rank(member []byte) (int, bool) {
	if z.Obj != nil {
		return z.Obj.Rank(member)
	}
	_, r, ok := zset.Find(z.LP, member)
	return r, ok
}

// Count returns how many elements lie before the bound.
func (z ZSetView) Count(before zset.Before) int {
	if z.Obj != nil {
		return z.Obj.Count(before)
	}
	return zset.Count(z.LP, before)
}

// Each calls fn for the elements of ranks start to end-1, from the highest
// rank down when rev.
func (z ZSetView) Each(start, end int, rev bool, fn func(member []byte, score float64)) {
	if z.Obj != nil {
		for i := start; i < end; i++ {
			r := i
			if rev {
				r = start + end - 1 - i
			}
			fn(z.Obj.At(r))
		}
		return
	}
	it := zset.NewIter(z.LP)
	for i := 0; i < start; i++ {
		it.Next()
	}
	if !rev {
		for i := start; i < end; i++ {
			m, s, _ := it.Next()
			fn(m, s)
		}
		return
	}
	var local [128]int
	offs := local[:0]
	for i := start; i < end; i++ {
		offs = append(offs, it.Offset())
		it.Next()
	}
	for i := len(offs) - 1; i >= 0; i-- {
		it.Seek(offs[i])
		m, s, _ := it.Next()
		fn(m, s)
	}
}

// EachInScores calls fn for the elements with min <= score < max in order,
// until fn returns false.
func (z ZSetView) EachInScores(min, max float64, fn func(member []byte, score float64) bool) {
	if z.Obj != nil {
		z.Obj.ScoreRange(min, max, fn)
		return
	}
	it := zset.NewIter(z.LP)
	for m, s, ok := it.Next(); ok && s < max; m, s, ok = it.Next() {
		if s >= min && !fn(m, s) {
			return
		}
	}
}

// EachRandom calls fn for n uniformly random members of a non-empty sorted
// set and their scores, repeats allowed. A compact one's elements are indexed
// for more than one draw; one is found by walking to it.
func (z ZSetView) EachRandom(n int, fn func(member []byte, score float64)) {
	if z.Obj != nil {
		for range n {
			fn(z.Obj.At(rand.IntN(z.Obj.Len())))
		}
		return
	}
	if n == 1 {
		r := rand.IntN(zset.Len(z.LP))
		z.Each(r, r+1, false, fn)
		return
	}
	offs := make([]int, 0, zset.Len(z.LP))
	it := zset.NewIter(z.LP)
	for {
		off := it.Offset()
		if _, _, ok := it.Next(); !ok {
			break
		}
		offs = append(offs, off)
	}
	for range n {
		it.Seek(offs[rand.IntN(len(offs))])
		m, s, _ := it.Next()
		fn(m, s)
	}
}

// RandomDistinct calls fn for count distinct random members and their scores
// (count < Len).
func (z ZSetView) RandomDistinct(count int, fn func(member []byte, score float64)) {
	n := z.Len()
	eachDistinct(count, n, func() []int { return indices(n) }, func() int { return rand.IntN(n) }, func(r int) {
		z.Each(r, r+1, false, fn)
	})
}

func (z ZSetView) object() keyspace.Object {
	if z.Obj == nil {
		return nil
	}
	return z.Obj
}

// ZSetEdit is a sorted set being changed: compact bytes rebuilt by each
// change, or the large form changed in place. Commit stores it.
type ZSetEdit struct {
	Edit
	ZSetView
}

// Begin starts an edit of key, looked up for writing as e (a sorted set when
// found; a missing key is an empty one). The caller keeps z on its stack.
func (z *ZSetEdit) Begin(env *Env, key []byte, e *keyspace.Entry, found bool) {
	*z = ZSetEdit{}
	z.begin(env, key, e, found)
	if found {
		z.ZSetView = ViewZSet(&z.entry)
	} else {
		z.LP = zset.Empty
	}
}

// Convert turns the compact form into the large form, for good.
func (z *ZSetEdit) Convert() {
	o := &ZSetObject{}
	it := zset.NewIter(z.LP)
	for m, s, ok := it.Next(); ok; m, s, ok = it.Next() {
		o.Add(m, s)
	}
	z.Obj, z.LP, z.changed = o, nil, true
}

// Add adds an absent member, converting past the compact limits as Redis's
// zsetAdd does.
func (z *ZSetEdit) Add(member []byte, score float64) {
	lim := z.env.Limits
	if z.Obj == nil && (int64(zset.Len(z.LP))+1 > lim.ZsetMaxListpackEntries() || int64(len(member)) > lim.ZsetMaxListpackValue()) {
		z.Convert()
	}
	if z.Obj != nil {
		z.Obj.Add(member, score)
		return
	}
	z.LP = zset.Insert(z.env.Scratch.Next(), z.LP, member, score)
	z.rebuilt(z.LP)
}

// Remove removes member, reporting whether it was present.
func (z *ZSetEdit) Remove(member []byte) bool {
	if z.Obj != nil {
		return z.Obj.Remove(member)
	}
	_, r, ok := zset.Find(z.LP, member)
	if ok {
		z.RemoveRange(r, r+1)
	}
	return ok
}

// SetScore changes a present member's score.
func (z *ZSetEdit) SetScore(member []byte, score float64) {
	if z.Obj != nil {
		z.Obj.SetScore(member, score)
		return
	}
	z.Remove(member)
	z.LP = zset.Insert(z.env.Scratch.Next(), z.LP, member, score)
	z.env.Scratch.Keep(z.LP)
}

// RemoveRange removes the elements of ranks start to end-1.
func (z *ZSetEdit) RemoveRange(start, end int) {
	if z.Obj != nil {
		for i := start; i < end; i++ {
			m, _ := z.Obj.At(start)
			z.Obj.Remove(m)
		}
		return
	}
	z.LP = zset.RemoveRange(z.env.Scratch.Next(), z.LP, start, end)
	z.rebuilt(z.LP)
}

// Commit stores the sorted set; an emptied one is deleted.
func (z *ZSetEdit) Commit() Commit {
	return z.writeBack(keyspace.TypeZSet, z.Len(), z.object(), keyspace.EncSkiplist, z.LP, keyspace.EncListpack)
}

// StoreZSet stores o at key (e looked up for writing) as a new sorted set
// (no expire time), compact when it fits the limits as Redis's
// zsetConvertToListpackIfNeeded does; an empty o deletes key.
func StoreZSet(env *Env, e *keyspace.Entry, found bool, key []byte, o *ZSetObject) Commit {
	n := o.Len()
	var lp []byte
	if int64(n) <= env.Limits.ZsetMaxListpackEntries() {
		lp = zset.Empty
		limit := env.Limits.ZsetMaxListpackValue()
		for i := 0; i < n; i++ {
			m, s := o.At(i)
			if int64(len(m)) > limit {
				lp = nil
				break
			}
			lp = zset.Insert(env.Scratch.Next(), lp, m, s)
			env.Scratch.Keep(lp)
		}
	}
	var obj keyspace.Object = o
	if lp != nil {
		obj = nil
	}
	return replace(env, e, found, key, keyspace.TypeZSet, n, obj, keyspace.EncSkiplist, lp, keyspace.EncListpack)
}
