package server

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/keyhive/keyhive/command"
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

// notifySubkeysIn publishes event of class for subkeys of key in database
// db on the subkey channels enabled (Redis 8.8), in the order the page
// lists them. A '|' in the event would make the subkeyspace and
// subkeyspaceevent channels ambiguous, a newline in the key the
// subkeyspaceitem channel: those are skipped, as in Redis.
func (s *Server) notifySubkeysIn(by *Client, class config.KeyspaceEvents, event string, key []byte, subkeys *command.Subkeys, db int) {
	f := config.KeyspaceEvents(s.notifyFlags.Load())
	if f&class == 0 || f&config.EventSubkeyChannels == 0 || subkeys.Len() == 0 {
		return
	}
	var buf, msg []byte
	if by != nil {
		buf, msg = by.notifyBuf[:0], by.subkeyMsg[:0]
	}
	pipeInEvent := strings.IndexByte(event, '|') >= 0
	if f&config.EventSubkeyspace != 0 && !pipeInEvent {
		buf = appendEventChannel(buf[:0], "__subkeyspace@", db, key)
		msg = append(append(append(msg[:0], event...), '|'), subkeys.Payload()...)
		s.publish(by, buf, msg, false)
	}
	if f&config.EventSubkeyevent != 0 {
		buf = appendEventChannel(buf[:0], "__subkeyevent@", db, []byte(event))
		msg = strconv.AppendInt(msg[:0], int64(len(key)), 10)
		msg = append(append(append(append(msg, ':'), key...), '|'), subkeys.Payload()...)
		s.publish(by, buf, msg, false)
	}
	if f&config.EventSubkeyspaceItem != 0 && bytes.IndexByte(key, '\n') < 0 {
		subkeys.Each(func(subkey []byte) {
			buf = appendEventChannel(buf[:0], "__subkeyspaceitem@", db, key)
			buf = append(append(buf, '\n'), subkey...)
			s.publish(by, buf, []byte(event), false)
		})
	}
	if f&config.EventSubkeyspaceEvent != 0 && !pipeInEvent {
		buf = appendEventChannel(buf[:0], "__subkeyspaceevent@", db, []byte(event))
		buf = append(append(buf, '|'), key...)
		s.publish(by, buf, subkeys.Payload(), false)
	}
	if by != nil && cap(buf) <= idleWriteMax && cap(msg) <= idleWriteMax {
		by.notifyBuf, by.subkeyMsg = buf, msg
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
