package values

import (
	"encoding/binary"
	"math"

	"github.com/keyhive/keyhive/persistence"
)

// Set member expiration (Redis 8.12's SEXPIRE family). A member's expire
// time is Unix ms, 0 for none, kept as a hash's large form keeps its
// fields' (fieldTTLs beside the members). A set takes the hashtable form
// before its first member TTL and keeps it (OBJECT ENCODING hashtable):
// redis.io's pages do not say what 8.12 reports, and one form keeps the
// TTL bookkeeping in one place. A set without member TTLs costs nothing
// more than before.
//
// Reads skip members expired at the view's Now: a replica, which does not
// delete them, sees what its master does (random draws included). A
// master removes the due members before a command reads the set
// (command.ReadAs, command.EditAs).

// HasTTLs reports whether some member has an expire time.
func (s SetView) HasTTLs() bool { return s.Obj != nil && s.Obj.ttl != nil }

// ExpireAt returns m's expire time (0 for none) and whether m is in the
// set, expired or not.
func (s SetView) ExpireAt(m []byte) (at int64, ok bool) {
	if s.Obj == nil {
		return 0, s.Has(m)
	}
	if _, ok = s.Obj.Get(m); ok && s.Obj.ttl != nil {
		at = s.Obj.ttl.get(m)
	}
	return at, ok
}

// Expired reports whether a member with expire time at is gone at the
// view's time.
func (s SetView) Expired(at int64) bool { return fieldExpired(at, s.Now) }

// MinExpire is at or before the earliest member expire time (exact after
// ExpireMembers), 0 for none.
func (s SetView) MinExpire() int64 {
	if !s.HasTTLs() {
		return 0
	}
	return s.Obj.ttl.min
}

// mayHoldExpired reports whether a member may be expired at the view's
// time: reads filter only then.
func (s SetView) mayHoldExpired() bool { return s.HasTTLs() && s.Expired(s.Obj.ttl.min) }

func (s SetView) memberExpired(m []byte) bool { return s.Expired(s.Obj.ttl.get(m)) }

// MemberGone reports whether m, a member met walking the hashtable (SSCAN),
// is expired at the view's time.
func (s SetView) MemberGone(m []byte) bool { return s.mayHoldExpired() && s.memberExpired(m) }

// expiredCount is the number of members expired at the view's time.
func (s SetView) expiredCount() int {
	n := 0
	s.Obj.ttl.each(func(_ []byte, at int64) {
		if s.Expired(at) {
			n++
		}
	})
	return n
}

// livePositions returns the hashtable positions of the members not
// expired at the view's time.
func (s SetView) livePositions() []int {
	pos := mapPositions(&s.Obj.Map)
	if !s.mayHoldExpired() {
		return pos
	}
	live := pos[:0]
	for _, p := range pos {
		if m, _ := s.Obj.At(p); !s.memberExpired(m) {
			live = append(live, p)
		}
	}
	return live
}

// PrepareTTL makes the set able to hold member TTLs: the hashtable form.
func (s *SetEdit) PrepareTTL() {
	if s.Obj == nil {
		s.toHashtable()
	}
}

// SetExpire gives m, a member of a set prepared by PrepareTTL, the expire
// time at (0 removes it).
func (s *SetEdit) SetExpire(m []byte, at int64) {
	s.Obj.ttl = s.Obj.ttl.with(m, at)
}

// ExpireMembers deletes every member whose expire time is at or before
// now, as the active cycle does, calling fn for each before it goes, and
// returns how many went.
func (s *SetEdit) ExpireMembers(now int64, fn func(m []byte)) int {
	if !s.HasTTLs() {
		return 0
	}
	gone := s.Obj.ttl.takeDue(now, fn)
	for _, m := range gone {
		s.Obj.Delete(m)
	}
	if s.Obj.ttl.Len() == 0 {
		s.Obj.ttl = nil
	}
	return len(gone)
}

// ttlAfterCommit records the set's earliest member expiry with the
// keyspace, as a hash's (HashEdit.ttlAfterCommit).
func (s *SetEdit) ttlAfterCommit(c Commit) {
	if c.Outcome != Deleted && s.HasTTLs() {
		s.env.DB.LowerSubexpiry(s.key, s.MinExpire())
	}
}

// setTTLModuleID names Keyhive's own file layout of a set with member
// TTLs (RDB files, DUMP payloads, a replica's full sync): Redis 8.12's RDB
// type for one is not published where Keyhive could read it, so the set
// is a module value of Keyhive's (persistence/module.go), which a
// redis-server refuses cleanly. Its one string is a uvarint count, then
// per member a uvarint length, the member, and a uvarint expire time in
// Unix ms (0 for none).
var setTTLModuleID = persistence.ModuleID("KH-SETTTL", persistence.KeyhiveEncVer)

// appendFile appends the set in setTTLModuleID's layout, expired members
// included (a load skips them).
func (s SetView) appendFile(b []byte) []byte {
	b = binary.AppendUvarint(b, uint64(s.Obj.Len()))
	for p := s.Obj.Next(0); p >= 0; p = s.Obj.Next(p + 1) {
		m, _ := s.Obj.At(p)
		b = binary.AppendUvarint(b, uint64(len(m)))
		b = append(b, m...)
		b = binary.AppendUvarint(b, uint64(s.Obj.ttl.get(m)))
	}
	return b
}

// readSetTTLFile decodes setTTLModuleID's layout into a set value with
// member TTLs.
func readSetTTLFile(b []byte) (persistence.Value, error) {
	v := persistence.Value{Type: persistence.TypeSet}
	n, w := binary.Uvarint(b)
	if w <= 0 || n > uint64(len(b)) {
		return v, persistence.ErrBadData
	}
	b = b[w:]
	for range n {
		l, w := binary.Uvarint(b)
		if w <= 0 || l > uint64(len(b)-w) {
			return v, persistence.ErrBadData
		}
		m := b[w : w+int(l)]
		at, w2 := binary.Uvarint(b[w+int(l):])
		if w2 <= 0 || at > math.MaxInt64 {
			return v, persistence.ErrBadData
		}
		v.Elems = append(v.Elems, m)
		v.FieldTTLs = append(v.FieldTTLs, int64(at))
		b = b[w+int(l)+w2:]
	}
	if len(b) != 0 {
		return v, persistence.ErrBadData
	}
	return v, nil
}

// loadWithTTLs builds a set from members with expire times read from a
// file, leaving out those expired at now, as a hash's fields are.
func (s *SetEdit) loadWithTTLs(members [][]byte, ttls []int64, now int64) bool {
	s.PrepareTTL()
	for i, m := range members {
		at := ttls[i]
		if at != 0 && at < now {
			if s.Has(m) {
				return false
			}
			continue
		}
		if !s.Add(m) {
			return false
		}
		if at != 0 {
			s.SetExpire(m, at)
		}
	}
	return true
}
