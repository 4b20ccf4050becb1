package values

// Set member expiration (Redis 8.12's SEXPIRE family). A member's expire
// time is Unix ms, 0 for none, kept as a hash's large form keeps its
// fields' (fieldTTLs beside the members). A set takes the hashtable form
// before its first member TTL and keeps it (OBJECT ENCODING hashtable):
// redis.io's pages do not say what 8.12 reports, and one form keeps the
// TTL bookkeeping in one place. A set without member TTLs costs nothing
// more than before.
//
// Reads skip members expired at the view's Now: a replica, which does not
// delete them, sees what its master does. A master removes the due
// members before a command reads the set (command.ReadAs), so the
// positional reads (Member, RandomPos, RandomDistinct) never meet one.

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
