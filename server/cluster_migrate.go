package server

import (
	"bufio"
	"errors"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/persistence"
	"github.com/keyhive/keyhive/resp"
	"github.com/keyhive/keyhive/values"
)

// MIGRATE moves keys to another server as Redis does: each key's DUMP
// payload goes in a RESTORE (RESTORE-ASKING from a cluster node, which the
// target runs on a slot it imports), all pipelined on a connection kept
// per target for a while; the keys the target took are then deleted here,
// unless COPY.

func init() {
	bind("migrate", migrateCommand)
	bind("restore-asking", restoreCommand)
}

// migrateIdle is how long a connection to a MIGRATE target is kept unused.
const migrateIdle = 10 * time.Second

// migrateConn is a cached connection to a MIGRATE target.
type migrateConn struct {
	conn     net.Conn
	r        *bufio.Reader
	db       int64 // the database selected on it, -1 for none yet
	lastUsed time.Time
}

// migrateConns caches a server's connections to MIGRATE targets by
// "host:port".
type migrateConns struct {
	mu sync.Mutex
	m  map[string]*migrateConn
}

// take returns the target's cached connection, or a new one; idle ones are
// closed on the way. The caller owns it until it gives it back (an error
// closes it instead).
func (mc *migrateConns) take(addr string, timeout time.Duration) (*migrateConn, error) {
	mc.mu.Lock()
	now := time.Now()
	for a, c := range mc.m {
		if now.Sub(c.lastUsed) > migrateIdle {
			c.conn.Close()
			delete(mc.m, a)
		}
	}
	c := mc.m[addr]
	delete(mc.m, addr)
	mc.mu.Unlock()
	if c != nil {
		return c, nil
	}
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	return &migrateConn{conn: conn, r: bufio.NewReader(conn), db: -1}, nil
}

func (mc *migrateConns) giveBack(addr string, c *migrateConn) {
	c.lastUsed = time.Now()
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if mc.m == nil {
		mc.m = map[string]*migrateConn{}
	}
	if old := mc.m[addr]; old != nil {
		old.conn.Close()
	}
	mc.m[addr] = c
}

// closeAll closes the cached connections (the server is closing).
func (mc *migrateConns) closeAll() {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	for a, c := range mc.m {
		c.conn.Close()
		delete(mc.m, a)
	}
}

// migrateCommand is MIGRATE host port key|"" db timeout [COPY] [REPLACE]
// [AUTH password | AUTH2 username password] [KEYS key ...].
func migrateCommand(x *Ctx) {
	copyKeys, replace := false, false
	var username, password []byte
	keys := x.Args[3:4]
	for j := 6; j < len(x.Args); j++ {
		more := len(x.Args) - 1 - j
		switch a := x.Args[j]; {
		case cstr.ArgIs(a, "copy"):
			copyKeys = true
		case cstr.ArgIs(a, "replace"):
			replace = true
		case cstr.ArgIs(a, "auth") && more >= 1:
			password = x.Args[j+1]
			j++
		case cstr.ArgIs(a, "auth2") && more >= 2:
			username, password = x.Args[j+1], x.Args[j+2]
			j += 2
		case cstr.ArgIs(a, "keys"):
			if len(x.Args[3]) != 0 {
				x.W.Error("ERR When using MIGRATE KEYS option, the key argument must be set to the empty string")
				return
			}
			keys = x.Args[j+1:]
			j = len(x.Args)
		default:
			x.W.Error(errSyntax)
			return
		}
	}
	timeoutMs, ok1 := strnum.ParseInt(x.Args[5])
	db, ok2 := strnum.ParseInt(x.Args[4])
	if !ok1 || !ok2 {
		x.W.Error(errNotInt)
		return
	}
	if timeoutMs <= 0 {
		timeoutMs = 1000
	}
	timeout := time.Duration(timeoutMs) * time.Millisecond

	// The request: AUTH, SELECT when the connection has another database,
	// then a RESTORE per key found.
	type found struct {
		key, payload []byte
		ttl          int64
	}
	var present []found
	for _, k := range keys {
		e, ok := x.LookupRead(k)
		if !ok {
			continue
		}
		ttl := int64(0)
		if at := e.ExpireAt(); at != 0 {
			ttl = max(at-x.Now, 1)
		}
		enc := values.NewEncoder(x.s.cfg.RDBCompression())
		payload := persistence.AppendDumpFooter(values.AppendValue(enc, nil, &e, nil, x.s.cfg))
		values.ReleaseEncoder(enc)
		present = append(present, found{k, payload, ttl})
	}
	if len(present) == 0 {
		x.W.Simple("NOKEY")
		return
	}
	addr := net.JoinHostPort(string(x.Args[1]), string(x.Args[2]))
	mc, err := x.s.migrateConns.take(addr, timeout)
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		// Redis's connect only waits for the socket to turn writable, as a
		// refused one does: the failure shows at the write.
		x.W.Error("IOERR error or timeout writing to target instance")
		return
	case err != nil:
		x.W.Error("IOERR error or timeout connecting to the client")
		return
	}
	var req []byte
	var preamble int // replies before the RESTOREs'
	if password != nil {
		if username != nil {
			req = resp.AppendCommand(req, [][]byte{[]byte("AUTH"), username, password})
		} else {
			req = resp.AppendCommand(req, [][]byte{[]byte("AUTH"), password})
		}
		preamble++
	}
	selecting := mc.db != db
	if selecting {
		req = resp.AppendCommand(req, [][]byte{[]byte("SELECT"), []byte(strconv.FormatInt(db, 10))})
		preamble++
	}
	restore := []byte("RESTORE")
	if x.s.cluster != nil {
		restore = []byte("RESTORE-ASKING")
	}
	for _, f := range present {
		argv := [][]byte{restore, f.key, []byte(strconv.FormatInt(f.ttl, 10)), f.payload}
		if replace {
			argv = append(argv, []byte("REPLACE"))
		}
		req = resp.AppendCommand(req, argv)
	}
	deadline := time.Now().Add(timeout)
	mc.conn.SetDeadline(deadline)
	if _, err := mc.conn.Write(req); err != nil {
		mc.conn.Close()
		x.W.Error("IOERR error or timeout writing to target instance")
		return
	}
	if mc.r.Buffered() == 0 {
		waitReadable(mc.conn, deadline)
	}

	// The replies: a refused RESTORE's key stays here, and the (last)
	// error is the reply.
	var targetErr string
	var moved [][]byte
	for i := range preamble + len(present) {
		line, err := mc.r.ReadString('\n')
		if err != nil {
			mc.conn.Close()
			x.W.Error("IOERR error or timeout reading to target instance")
			return
		}
		line = trimCRLF(line)
		failed := len(line) > 0 && line[0] == '-'
		switch {
		case failed:
			targetErr = line[1:]
		case i >= preamble:
			moved = append(moved, present[i-preamble].key)
		case selecting && i == preamble-1:
			mc.db = db // the SELECT's reply is the last before the RESTOREs'
		}
	}
	x.s.migrateConns.giveBack(addr, mc)
	if !copyKeys && len(moved) > 0 {
		for _, k := range moved {
			if _, ok := x.LookupWrite(k); ok && x.DB.Delete(k) {
				x.Notify(notifyGeneric, "del", k)
				x.Dirty++
			}
		}
		x.PropagateAs(append([][]byte{argDEL}, moved...)...)
	} else {
		x.PropagateNone()
	}
	if targetErr != "" {
		x.W.Error("ERR Target instance replied with error: " + targetErr)
		return
	}
	x.W.OK()
}

func trimCRLF(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	return s
}
