package server

import (
	"strconv"

	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/namespace"
)

// Keyspace notifications (notify-keyspace-events): a change to a key is
// published as the event name on __keyspace@<db>__:<key> (class K) and as the
// key on __keyevent@<db>__:<event> (class E), when the change's class (g, $,
// l, s, h, z, x, e, t, n, m, and Redis 8.2's o and c) is enabled. Handlers
// raise events through package command (Ctx.Notify, by their client's
// Notify) right after the change, in the order Redis emits them; the
// keyspace's hooks report new keys ("new") and expiries ("expired")
// themselves.

// Event classes, as the server's own events name them.
const (
	notifyGeneric = config.EventGeneric
	notifyHash    = config.EventHash
	notifySet     = config.EventSet
	notifyExpired = config.EventExpired
	notifyEvicted = config.EventEvicted
	notifyNew     = config.EventNew
)

// notifyIn publishes event of class for key in database db. by is the client
// whose command made the change (nil: the server's own, e.g. the expiry
// cycle): subscribers are written at its next flush, and its own
// subscription receives the event within its reply stream, as in Redis.
func (s *Server) notifyIn(by *Client, class config.KeyspaceEvents, event string, key []byte, db int) {
	f := config.KeyspaceEvents(s.notifyFlags.Load())
	if f&class == 0 || f&(config.EventKeyspace|config.EventKeyevent) == 0 {
		return
	}
	var buf []byte
	if by != nil {
		buf = by.notifyBuf[:0]
	}
	if f&config.EventKeyspace != 0 {
		buf = appendEventChannel(buf, "__keyspace@", db, key)
		s.publish(by, buf, []byte(event), false)
	}
	if f&config.EventKeyevent != 0 {
		buf = appendEventChannel(buf[:0], "__keyevent@", db, []byte(event))
		s.publish(by, buf, key, false)
	}
	if by != nil && cap(buf) <= idleWriteMax {
		by.notifyBuf = buf
	}
}

func appendEventChannel(b []byte, kind string, db int, name []byte) []byte {
	b = append(b, kind...)
	b = strconv.AppendInt(b, int64(db), 10)
	b = append(b, "__:"...)
	return append(b, name...)
}

// watchNotify keeps notifyFlags, read by every write, equal to
// notify-keyspace-events.
func (s *Server) watchNotify() {
	sync := func() { s.notifyFlags.Store(uint32(s.cfg.NotifyKeyspaceEvents())) }
	sync()
	s.cfg.OnChange("notify-keyspace-events", sync)
}

// keyCreated is the keyspace's Created hook: the "new" event.
func (s *Server) keyCreated(db int, key []byte, owner keyspace.Owner) {
	by, _ := owner.(*Client)
	s.notifyIn(by, notifyNew, "new", key, db)
}

// keyExpired is the keyspace's Expired hook: the "expired" event, then the
// deletion's propagation, in Redis's order.
func (s *Server) keyExpired(db int, key []byte) {
	if t := s.schema.Load(); t != nil {
		t.Count(db, key, namespace.Expired)
	}
	s.notifyIn(nil, notifyExpired, "expired", key, db)
	s.propagateExpired(db, key)
}
