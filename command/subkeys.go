package command

import (
	"strconv"

	"github.com/keyhive/keyhive/config"
)

// Subkey notifications (Redis 8.8, notify-keyspace-events S, T, I and V):
// beside its key-level event, a hash command names the fields it touched.
// https://redis.io/docs/latest/develop/pubsub/subkeyspace-notifications/
// A handler asks SubkeysOn once, gathers the fields of one event with
// AddSubkey (only when on: nothing is gathered, or costs, otherwise) and
// publishes them with NotifySubkeys after the event's Committed or Notify.

// Subkeys is the subkeys of one event in the payload's form,
// "<len>:<subkey>" joined by commas, which keeps them binary-safe.
type Subkeys struct {
	buf []byte
	n   int
}

// Add appends subkey.
func (s *Subkeys) Add(subkey []byte) {
	if s.n > 0 {
		s.buf = append(s.buf, ',')
	}
	s.buf = strconv.AppendInt(s.buf, int64(len(subkey)), 10)
	s.buf = append(append(s.buf, ':'), subkey...)
	s.n++
}

// Reset empties s, keeping its memory.
func (s *Subkeys) Reset() { s.buf, s.n = s.buf[:0], 0 }

// Len is the number of subkeys.
func (s *Subkeys) Len() int { return s.n }

// Payload is the subkeys in the payload's form.
func (s *Subkeys) Payload() []byte { return s.buf }

// Each calls f with each subkey, in order.
func (s *Subkeys) Each(f func(subkey []byte)) {
	b := s.buf
	for len(b) > 0 {
		colon := 0
		n := 0
		for b[colon] != ':' {
			n = n*10 + int(b[colon]-'0')
			colon++
		}
		f(b[colon+1 : colon+1+n])
		b = b[min(colon+2+n, len(b)):]
	}
}

// SubkeysOn reports whether a subkey channel is enabled for events of
// class: whether AddSubkey is worth calling.
func (x *Ctx) SubkeysOn(class config.KeyspaceEvents) bool { return x.host.SubkeyEvents(class) }

// AddSubkey adds subkey to the event being gathered.
func (x *Ctx) AddSubkey(subkey []byte) { x.subkeys.Add(subkey) }

// NotifySubkeys publishes the gathered subkeys as event of class for key,
// and forgets them; nothing is published when none were gathered.
func (x *Ctx) NotifySubkeys(class config.KeyspaceEvents, event string, key []byte) {
	if x.subkeys.n == 0 {
		return
	}
	x.conn.NotifySubkeys(class, event, key, &x.subkeys, x.DB.ID())
	x.subkeys.Reset()
}
