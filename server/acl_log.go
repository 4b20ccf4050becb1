package server

import "github.com/keyhive/keyhive/internal/strnum"

// ACL LOG: denied commands, keys, channels and failed authentications,
// newest first. A denial like one of the last ten within a minute (same
// reason, context, object and user) counts on that entry and moves it to the
// front, as in Redis. Entries carry Redis 7.2's entry-id and timestamps.

const (
	aclLogGroupWindowMs = 60000
	aclLogGroupScan     = 10
)

type aclLogEntry struct {
	count                    int64
	reason, context, object  string
	username, clientInfo     string
	id, created, lastUpdated int64 // Unix ms
}

type aclLog struct {
	entries []*aclLogEntry // newest first
	nextID  int64
}

var aclReasons = [...]string{aclDeniedCmd: "command", aclDeniedKey: "key", aclDeniedAuth: "auth", aclDeniedChannel: "channel"}

// aclLogAdd records a denial by client c (for a script, its caller).
func (s *Server) aclLogAdd(c *Client, verdict int, context, object, username string) {
	now := s.clock.UnixMilli()
	info := c.infoLine(c)
	reason := aclReasons[verdict]
	s.acl.mu.Lock()
	defer s.acl.mu.Unlock()
	l := &s.acl.log
	for i, e := range l.entries[:min(len(l.entries), aclLogGroupScan)] {
		if e.reason == reason && e.context == context && e.object == object && e.username == username &&
			now-e.lastUpdated <= aclLogGroupWindowMs {
			e.count++
			e.lastUpdated, e.clientInfo = now, info
			copy(l.entries[1:i+1], l.entries[:i])
			l.entries[0] = e
			return
		}
	}
	e := &aclLogEntry{count: 1, reason: reason, context: context, object: object, username: username,
		clientInfo: info, id: l.nextID, created: now, lastUpdated: now}
	l.nextID++
	l.entries = append([]*aclLogEntry{e}, l.entries...)
	if max := s.cfg.ACLLogMaxLen(); int64(len(l.entries)) > max {
		l.entries = l.entries[:max]
	}
}

func aclLogCommand(x *Ctx) {
	if len(x.Args) > 3 {
		errACLSubSyntax(x)
		return
	}
	s := x.s
	count := int64(10)
	if len(x.Args) == 3 {
		if cArgIs(x.Args[2], "reset") {
			s.acl.mu.Lock()
			s.acl.log.entries = nil
			s.acl.mu.Unlock()
			x.W.OK()
			return
		}
		n, ok := strnum.ParseInt(x.Args[2])
		if !ok {
			x.W.Error(errNotInt)
			return
		}
		count = max(n, 0)
	}
	now := s.clock.UnixMilli()
	s.acl.mu.Lock()
	entries := s.acl.log.entries[:min(int64(len(s.acl.log.entries)), count)]
	copied := make([]aclLogEntry, len(entries))
	for i, e := range entries {
		copied[i] = *e
	}
	s.acl.mu.Unlock()
	w := x.W
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
