package acl

import (
	"sync"

	"github.com/keyhive/keyhive/resp"
)

// ACL LOG: denied commands, keys, channels and failed authentications,
// newest first. A denial like one of the last ten within a minute (same
// reason, context, object and user) counts on that entry and moves it to the
// front, as in Redis. Entries carry Redis 7.2's entry-id and timestamps.

const (
	logGroupWindowMs = 60000
	logGroupScan     = 10
)

// Contexts of an ACL LOG entry: where the denied command came from.
const (
	Toplevel = "toplevel"
	Multi    = "multi"
	Lua      = "lua"
)

type logEntry struct {
	count                    int64
	reason, context, object  string
	username, clientInfo     string
	id, created, lastUpdated int64 // Unix ms
}

// Log is the ACL LOG.
type Log struct {
	mu      sync.Mutex
	entries []*logEntry // newest first
	nextID  int64
}

var reasons = [...]string{DeniedCommand: "command", DeniedKey: "key", DeniedAuth: "auth", DeniedChannel: "channel"}

// Add records a denial at now (Unix ms), keeping at most maxLen entries.
func (l *Log) Add(now, maxLen int64, v Verdict, context, object, username, clientInfo string) {
	reason := reasons[v]
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, e := range l.entries[:min(len(l.entries), logGroupScan)] {
		if e.reason == reason && e.context == context && e.object == object && e.username == username &&
			now-e.lastUpdated <= logGroupWindowMs {
			e.count++
			e.lastUpdated, e.clientInfo = now, clientInfo
			copy(l.entries[1:i+1], l.entries[:i])
			l.entries[0] = e
			return
		}
	}
	e := &logEntry{count: 1, reason: reason, context: context, object: object, username: username,
		clientInfo: clientInfo, id: l.nextID, created: now, lastUpdated: now}
	l.nextID++
	l.entries = append([]*logEntry{e}, l.entries...)
	if int64(len(l.entries)) > maxLen {
		l.entries = l.entries[:maxLen]
	}
}

// Reset is ACL LOG RESET.
func (l *Log) Reset() {
	l.mu.Lock()
	l.entries = nil
	l.mu.Unlock()
}

// Write replies ACL LOG's newest count entries, their ages as of now.
func (l *Log) Write(w *resp.Writer, count, now int64) {
	l.mu.Lock()
	entries := l.entries[:min(int64(len(l.entries)), count)]
	copied := make([]logEntry, len(entries))
	for i, e := range entries {
		copied[i] = *e
	}
	l.mu.Unlock()
	w.Array(len(copied))
	for _, e := range copied {
		w.Map(10)
		w.BulkString("count")
		w.Int(e.count)
		w.BulkString("reason")
		w.BulkString(e.reason)
		w.BulkString("context")
		w.BulkString(e.context)
		w.BulkString("object")
		w.BulkString(e.object)
		w.BulkString("username")
		w.BulkString(e.username)
		w.BulkString("age-seconds")
		w.Double(float64(now-e.lastUpdated) / 1000)
		w.BulkString("client-info")
		w.BulkString(e.clientInfo)
		w.BulkString("entry-id")
		w.Int(e.id)
		w.BulkString("timestamp-created")
		w.Int(e.created)
		w.BulkString("timestamp-last-updated")
		w.Int(e.lastUpdated)
	}
}
