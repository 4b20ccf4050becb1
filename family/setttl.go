package family

import (
	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/values"
)

// Set member expiration, Redis 8.12, from redis.io's pages (no 8.12
// binary to compare with): SEXPIRE, SPEXPIRE, SEXPIREAT, SPEXPIREAT, STTL,
// SPTTL, SEXPIRETIME, SPEXPIRETIME, SPERSIST and SADDEX. They mirror the
// hash field commands (hashes.go): the same per-element reply codes, the
// same propagation as absolute times, events named as the hash ones
// (sexpire, spersist, sexpired; srem when a past time removes members).
// Members past their TTL are removed before a command sees the set
// (command.ReadAs, command.EditAs) and by the active cycle.

func registerSetTTL(bind binder) {
	bind("sexpire", func(x *command.Ctx) { sexpireCommand(x, 1000, false) })
	bind("spexpire", func(x *command.Ctx) { sexpireCommand(x, 1, false) })
	bind("sexpireat", func(x *command.Ctx) { sexpireCommand(x, 1000, true) })
	bind("spexpireat", func(x *command.Ctx) { sexpireCommand(x, 1, true) })
	bind("sttl", func(x *command.Ctx) { sttlCommand(x, 1000, false) })
	bind("spttl", func(x *command.Ctx) { sttlCommand(x, 1, false) })
	bind("sexpiretime", func(x *command.Ctx) { sttlCommand(x, 1000, true) })
	bind("spexpiretime", func(x *command.Ctx) { sttlCommand(x, 1, true) })
	bind("spersist", spersistCommand)
	bind("saddex", saddexCommand)
}

var (
	argSPEXPIREAT = []byte("SPEXPIREAT")
	argMEMBERS    = []byte("MEMBERS")
)

const errMemberCount = "ERR Number of members must be a positive integer"

// sexpireCommand is SEXPIRE, SPEXPIRE, SEXPIREAT and SPEXPIREAT: per member
// -2 (no such member), 0 (condition not met), 1 (set) or 2 (removed: the
// time has passed). It propagates as SPEXPIREAT with the members it set.
// https://redis.io/docs/latest/commands/sexpire/
func sexpireCommand(x *command.Ctx, unitMs int64, absolute bool) {
	key := x.Args[1]
	var s values.SetEdit
	if !command.EditAs(x, key, &s) {
		return
	}
	at, ok := fieldExpireTime(x, x.Args[2], unitMs, absolute)
	if !ok {
		return
	}
	cond, membersAt := parseExpireCond(x.Args[3]), 3
	if cond != condNone {
		membersAt++
	}
	members, ok := parseBlockArg(x, membersBlock, membersAt, errMemberCount)
	if !ok {
		return
	}
	x.W.Array(len(members))
	if !s.Found() {
		for range members {
			x.W.Int(-2)
		}
		return
	}
	s.PrepareTTL()
	var set [][]byte // the members to propagate, when propagating
	updated, removed := 0, 0
	for _, m := range members {
		prev, exists := s.ExpireAt(m)
		switch {
		case !exists:
			x.W.Int(-2)
		case !expireCondMet(cond, prev, at):
			x.W.Int(0)
		case x.AlreadyExpired(at): // not on a replica: its master's SREM follows
			x.Conn().ElementExpired(x, keyspace.TypeSet, key, m)
			s.Remove(m)
			removed++
			x.W.Int(2)
		default:
			s.SetExpire(m, at)
			updated++
			if x.Propagating() {
				set = append(set, m)
			}
			x.W.Int(1)
		}
	}
	event := ""
	switch {
	case removed > 0:
		event = "srem"
	case updated > 0:
		event = "sexpire"
	}
	x.Committed(s.Commit(), event)
	x.Dirty += updated + removed
	propagateElementTTL(x, argSPEXPIREAT, argMEMBERS, key, at, cond != condNone, unitMs == 1 && absolute && len(set) == len(members), updated, set)
}

// sttlCommand is STTL, SPTTL, SEXPIRETIME and SPEXPIRETIME: per member -2
// (no such member), -1 (no TTL) or the time.
// https://redis.io/docs/latest/commands/sttl/
func sttlCommand(x *command.Ctx, unitMs int64, absolute bool) {
	s, found, ok := command.ReadAs[values.SetView](x, x.Args[1])
	if !ok {
		return
	}
	members, ok := parseBlockArg(x, membersBlock, 2, errMemberCount)
	if !ok {
		return
	}
	var base int64
	if !absolute {
		base = x.Now
	}
	x.W.Array(len(members))
	for _, m := range members {
		var at int64
		exists := false
		if found {
			at, exists = s.ExpireAt(m)
		}
		switch {
		case !exists || s.Expired(at):
			x.W.Int(-2)
		case at == 0:
			x.W.Int(-1)
		case unitMs == 1000:
			x.W.Int((at + 999 - base) / 1000)
		default:
			x.W.Int(at - base)
		}
	}
}

// spersistCommand is SPERSIST: per member -2 (no such member), -1 (no TTL)
// or 1 (TTL removed).
// https://redis.io/docs/latest/commands/spersist/
func spersistCommand(x *command.Ctx) {
	key := x.Args[1]
	var s values.SetEdit
	if !command.EditAs(x, key, &s) {
		return
	}
	members, ok := parseBlockArg(x, membersBlock, 2, errMemberCount)
	if !ok {
		return
	}
	x.W.Array(len(members))
	changed := false
	for _, m := range members {
		at, exists := s.ExpireAt(m)
		switch {
		case !exists:
			x.W.Int(-2)
		case at == 0:
			x.W.Int(-1)
		default:
			s.SetExpire(m, 0)
			changed = true
			x.W.Int(1)
		}
	}
	if changed {
		x.Committed(s.Commit(), "spersist")
		x.Dirty++
	}
}

// saddexCommand is SADDEX key [MNX|MXX] [EX|PX|EXAT|PXAT time|KEEPTTL]
// MEMBERS nummembers member ...: the members are added (MNX: only when
// none is there; MXX: only when all are), each with the time given, or
// without one (KEEPTTL: existing members keep theirs). The page gives no
// reply; Keyhive replies as SADD, the number of members added. It
// propagates as SADDEX with PXAT.
// https://redis.io/docs/latest/commands/saddex/
func saddexCommand(x *command.Ctx) {
	key := x.Args[1]
	var s values.SetEdit
	if !command.EditAs(x, key, &s) {
		return
	}
	i := 2
	mnx, mxx := false, false
	switch {
	case cstr.ArgIs(x.Args[i], "mnx"):
		mnx = true
		i++
	case cstr.ArgIs(x.Args[i], "mxx"):
		mxx = true
		i++
	}
	var at int64
	keepTTL := false
	if cstr.ArgIs(x.Args[i], "keepttl") {
		keepTTL = true
		i++
	} else if unitMs, absolute, ok := expiryOption(x.Args[i]); ok {
		if i+1 >= len(x.Args) {
			x.W.Error(command.ErrSyntax)
			return
		}
		if at, ok = fieldExpireTime(x, x.Args[i+1], unitMs, absolute); !ok {
			return
		}
		i += 2
	}
	members, ok := parseBlockArg(x, membersBlock, i, errMemberCount)
	if !ok {
		return
	}
	if mnx || mxx {
		for _, m := range members {
			if s.Has(m) != mxx {
				x.W.Int(0)
				return
			}
		}
	}
	if at != 0 && x.AlreadyExpired(at) {
		// A past time: the members are not there after the command.
		removed := 0
		for _, m := range members {
			if s.Remove(m) {
				removed++
			}
		}
		x.Committed(s.Commit(), command.EventIf(removed > 0, "srem"))
		x.Dirty += removed
		if x.Propagating() {
			x.PropagateAs(append([][]byte{argSREM, key}, members...)...)
		}
		x.W.Int(0)
		return
	}
	s.Expect(members[0], len(members))
	if at != 0 {
		s.PrepareTTL()
	}
	setTTL := at != 0 || !keepTTL && s.HasTTLs() // else no member has one to clear
	added := 0
	for _, m := range members {
		if s.Add(m) {
			added++
		}
		if setTTL {
			s.SetExpire(m, at)
		}
	}
	event := "sadd"
	if at != 0 {
		event = "sexpire"
	}
	x.Committed(s.Commit(), event)
	x.Dirty += len(members)
	if at != 0 && x.Propagating() {
		argv := make([][]byte, 0, 6+len(members))
		argv = append(argv, x.Args[0], key, argPXAT, command.IntArg(at), argMEMBERS, command.IntArg(int64(len(members))))
		x.PropagateAs(append(argv, members...)...)
	}
	x.W.Int(int64(added))
}
