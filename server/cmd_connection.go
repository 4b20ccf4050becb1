package server

import (
	"fmt"
	"math"
	"net"
	"strings"
	"sync/atomic"
	"time"

	"github.com/keyhive/keyhive/acl"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/internal/version"
	"github.com/keyhive/keyhive/resp"
)

func init() {
	bind("ping", pingCommand)
	bind("echo", echoCommand)
	bind("quit", quitCommand)
	bind("reset", resetCommand)
	bind("hello", helloCommand)
	bind("auth", authCommand)
	bind("select", selectCommand)
	bindSub("client", "id", func(x *Ctx) { x.W.Int(int64(x.c.id)) })
	bindSub("client", "tracking", clientTrackingCommand)
	bindSub("client", "caching", clientCachingCommand)
	bindSub("client", "getredir", func(x *Ctx) { x.W.Int(x.c.redirectID()) })
	bindSub("client", "trackinginfo", clientTrackingInfo)
	bindSub("client", "setname", clientSetName)
	bindSub("client", "getname", clientGetName)
	bindSub("client", "list", clientList)
	bindSub("client", "info", func(x *Ctx) { x.W.Verbatim("txt", x.c.infoLine(x.c)+"\n") })
	bindSub("client", "kill", clientKill)
	bindSub("client", "setinfo", clientSetInfo)
	bindSub("client", "reply", clientReply)
	bindSub("client", "no-evict", func(x *Ctx) { clientOnOff(x, &x.c.noEvict) })
	bindSub("client", "no-touch", func(x *Ctx) { clientOnOff(x, &x.c.noTouch) })
	bindSub("client", "unblock", clientUnblock)
	bindSub("client", "pause", clientPause)
	bindSub("client", "unpause", func(x *Ctx) { x.s.unpauseClients(); x.W.OK() })
	bindSub("client", "help", clientHelp)
}

// clientUnblock ends another client's blocking command as a timeout or with
// an error.
func clientUnblock(x *Ctx) {
	if len(x.Args) > 4 {
		x.W.Error(errUnknownSubcommand("client", x.Args[1]))
		return
	}
	reply := func(w *waiter) func(*resp.Writer) { return w.timedOut }
	if len(x.Args) == 4 {
		switch {
		case cstr.ArgIs(x.Args[3], "timeout"):
		case cstr.ArgIs(x.Args[3], "error"):
			reply = func(*waiter) func(*resp.Writer) {
				return func(w *resp.Writer) { w.Error("UNBLOCKED client unblocked via CLIENT UNBLOCK") }
			}
		default:
			x.W.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	}
	id, ok := strnum.ParseInt(x.Args[2])
	if !ok {
		x.W.Error(errNotInt)
		return
	}
	if target := x.s.clientByID(id); target != nil {
		if w := target.waiting.Load(); w != nil && x.s.blocking.unblock(w, reply(w)) {
			x.s.logIfSlow(w.c, w.ctx.cmd, nil, w.ran.Load(), x.Now) // as Redis: no arguments
			x.W.Int(1)
			return
		}
	}
	x.W.Int(0)
}

func pingCommand(x *Ctx) {
	if len(x.Args) <= 2 && x.W.Proto == 2 && x.c.ps.subscribed() {
		pingSubscribed(x)
		return
	}
	switch len(x.Args) {
	case 1:
		x.W.Simple("PONG")
	case 2:
		x.W.Bulk(x.Args[1])
	default:
		x.W.Error(errArity("ping"))
	}
}

func echoCommand(x *Ctx) { x.W.Bulk(x.Args[1]) }

func quitCommand(x *Ctx) {
	x.W.OK()
	x.c.closeAfterReply = true
}

func resetCommand(x *Ctx) {
	c := x.c
	x.s.stopMonitor(c)
	x.s.disableTracking(c)
	c.setMulti(nil)
	x.s.watches.unwatchAll(c)
	x.s.unsubscribeAll(c)
	c.setDB(0)
	c.setProto(2)
	c.name.Store(nil)
	// OFF and a SKIP for the next command are cleared; a SKIP that already
	// applies to this command still drops RESET's own reply, as in Redis.
	if c.reply != replySkipThis {
		c.reply = replyOn
	}
	c.noEvict.Store(false)
	c.noTouch.Store(false)
	c.resetAuth()
	x.W.Simple("RESET")
}

func (c *Client) setProto(p int) {
	c.out.Proto = p
	c.proto.Store(int32(p))
}

const errWrongPass = "WRONGPASS invalid username-password pair or user is disabled."

func authCommand(x *Ctx) {
	if len(x.Args) > 3 {
		x.W.Error(errSyntax)
		return
	}
	user, pass := []byte("default"), x.Args[1]
	if len(x.Args) == 3 {
		user, pass = x.Args[1], x.Args[2]
	} else if x.s.acl.Default().Perms().NoPass() {
		x.W.Error("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
		return
	}
	if !x.c.authenticate(user, pass) {
		x.W.Error(errWrongPass)
		return
	}
	x.W.OK()
}

func helloCommand(x *Ctx) {
	c := x.c
	proto := int(c.proto.Load())
	i := 1
	if len(x.Args) > 1 {
		v, ok := strnum.ParseInt(x.Args[1])
		if !ok {
			x.W.Error("ERR Protocol version is not an integer or out of range")
			return
		}
		if v < 2 || v > 3 {
			x.W.Error("NOPROTO unsupported protocol version")
			return
		}
		proto, i = int(v), 2
	}
	// The options are all read (a bad name refused) before any is applied,
	// as in Redis 7.2+: the last AUTH and SETNAME count, and a syntax
	// error leaves the client as it was.
	var user, pass, name []byte
	var auth, rename bool
	for ; i < len(x.Args); i++ {
		more := len(x.Args) - i - 1
		switch opt := x.Args[i]; {
		case cstr.ArgIs(opt, "auth") && more >= 2:
			user, pass, auth = x.Args[i+1], x.Args[i+2], true
			i += 2
		case cstr.ArgIs(opt, "setname") && more >= 1:
			if !validClientName(x.Args[i+1]) {
				x.W.Error(errClientName)
				return
			}
			name, rename = x.Args[i+1], true
			i++
		default:
			x.W.Error("ERR Syntax error in HELLO option '" + cstr.String(x.Args[i]) + "'")
			return
		}
	}
	if auth && !c.authenticate(user, pass) {
		x.W.Error(errWrongPass)
		return
	}
	if c.authRequired() {
		x.W.Error("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	if rename {
		c.setName(name)
	}
	c.setProto(proto)
	w := x.W
	w.Map(7)
	w.BulkString("server")
	w.BulkString("redis")
	w.BulkString("version")
	w.BulkString(version.Redis)
	w.BulkString("proto")
	w.Int(int64(proto))
	w.BulkString("id")
	w.Int(int64(c.id))
	w.BulkString("mode")
	w.BulkString("standalone")
	w.BulkString("role")
	w.BulkString("master")
	w.BulkString("modules")
	w.Array(0)
}

// setDB switches the client's database.
func (c *Client) setDB(i int) { c.db.Store(int32(i)) }

func selectCommand(x *Ctx) {
	v, ok := strnum.ParseInt(x.Args[1])
	if !ok {
		x.W.Error(errNotInt)
		return
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		x.W.Error("ERR value is out of range, value must between -2147483648 and 2147483647")
		return
	}
	if x.s.cluster != nil && v != 0 {
		x.W.Error(errSelectCluster)
		return
	}
	if v < 0 || v >= int64(x.s.ks.Len()) {
		x.W.Error(errDBIndex)
		return
	}
	x.c.setDB(int(v))
	if v != 0 {
		x.c.ClusterIncompatible()
	}
	x.W.OK()
}

const errClientName = "ERR Client names cannot contain spaces, newlines or special characters."

func validClientName(b []byte) bool {
	for _, c := range b {
		if c < '!' || c > '~' {
			return false
		}
	}
	return true
}

func (c *Client) setName(b []byte) {
	if len(b) == 0 {
		c.name.Store(nil)
		return
	}
	s := string(b)
	c.name.Store(&s)
}

func loadString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func clientSetName(x *Ctx) {
	if !validClientName(x.Args[2]) {
		x.W.Error(errClientName)
		return
	}
	x.c.setName(x.Args[2])
	x.W.OK()
}

func clientGetName(x *Ctx) {
	if p := x.c.name.Load(); p != nil {
		x.W.BulkString(*p)
		return
	}
	x.W.Null()
}

func clientSetInfo(x *Ctx) {
	attr, value := strings.ToLower(string(x.Args[2])), string(x.Args[3])
	var dst = map[string]*atomic.Pointer[string]{"lib-name": &x.c.libName, "lib-ver": &x.c.libVer}[attr]
	if dst == nil {
		x.W.Error("ERR Unrecognized option '" + cstr.String(x.Args[2]) + "'")
		return
	}
	if !validClientName(x.Args[3]) {
		x.W.Error("ERR " + cstr.String(x.Args[2]) + " cannot contain spaces, newlines or special characters.")
		return
	}
	dst.Store(&value)
	x.W.OK()
}

func clientReply(x *Ctx) {
	switch strings.ToLower(string(x.Args[2])) {
	case "on":
		x.c.reply = replyOn
		x.W.OK()
	case "off":
		x.c.reply = replyOff
	case "skip":
		if x.c.reply != replyOff {
			x.c.reply = replySkipNext
		}
	default:
		x.W.Error(errSyntax)
	}
}

func clientOnOff(x *Ctx, flag interface{ Store(bool) }) {
	switch strings.ToLower(string(x.Args[2])) {
	case "on":
		flag.Store(true)
	case "off":
		flag.Store(false)
	default:
		x.W.Error(errSyntax)
		return
	}
	x.W.OK()
}

// infoLine formats the client as CLIENT LIST and CLIENT INFO show it, for
// the command of running. File descriptors are not exposed by Go's net
// package, so fd is the client id's stand-in (-1 would confuse tools).
func (c *Client) infoLine(running *Client) string {
	now := time.Now()
	cmd := "NULL"
	if lc := c.lastCmd.Load(); lc != nil {
		cmd = lc.Name
	}
	flags := ""
	if c.peer.IsReplica() {
		flags += "S"
	}
	if c.peer.IsMaster() {
		flags += "M"
	}
	if c.monitor.Load() {
		flags += "O"
	}
	if c.pubsubType() {
		flags += "P"
	}
	queued := c.queued.Load()
	if queued >= 0 {
		flags += "x"
	}
	if c.waiting.Load() != nil || c.paused.Load() {
		flags += "b"
	}
	if o := c.tracking.opts.Load(); o != nil {
		flags += "t"
		if c.tracking.brokenRedir.Load() {
			flags += "R"
		}
		if o.bcast {
			flags += "B"
		}
	}
	if c.watchBroken.Load() {
		flags += "d"
	}
	if c.isUnix() {
		flags += "U"
	}
	if c.noEvict.Load() {
		flags += "e"
	}
	if c.noTouch.Load() {
		flags += "T"
	}

	if flags == "" {
		flags = "N"
	}
	idle := (c.s.clock.UnixMilli() - c.lastSeen.Load()) / 1000
	m := c.memoryUse(c == running)
	return fmt.Sprintf("id=%d addr=%s laddr=%s fd=%d name=%s age=%d idle=%d flags=%s db=%d sub=%d psub=%d ssub=%d multi=%d watch=%d qbuf=%d qbuf-free=%d argv-mem=%d multi-mem=%d rbs=%d rbp=%d obl=%d oll=0 omem=%d tot-mem=%d events=r cmd=%s user=%s redir=%d resp=%d lib-name=%s lib-ver=%s",
		c.id, c.peerAddr(), c.localAddr(), c.id, loadString(c.name.Load()),
		int64(now.Sub(c.created).Seconds()), max(idle, 0), flags, c.db.Load(),
		c.ps.nsub.Load(), c.ps.npsub.Load(), c.ps.nssub.Load(), queued, c.nWatched.Load(),
		m.qbuf, m.qbufFree, m.argv, m.multi, m.replyBuf, m.replyPeak, m.replyLen, m.outQueue, m.total(),
		cmd, c.userName(), c.redirectID(), c.proto.Load(), loadString(c.libName.Load()), loadString(c.libVer.Load()))
}

// clientMemory is what CLIENT LIST reports of a client's memory. Its own
// buffers are read exactly when the client asks about itself (from its own
// goroutine); of another client, whose goroutine owns them, the shared
// counters tell the pending input and queued output, and the buffers their
// starting sizes.
type clientMemory struct {
	qbuf, qbufFree int64 // the read buffer: bytes in it, room left
	argv           int64 // the arguments of the command running
	multi          int64 // the commands MULTI queued
	replyBuf       int64 // the reply buffer's size
	replyPeak      int64 // and the bytes in it
	replyLen       int64 // obl: the replies not written yet
	outQueue       int64 // omem: the queue of a client that receives messages
}

func (m clientMemory) total() int64 {
	return m.qbuf + m.qbufFree + m.argv + m.multi + m.replyBuf + m.outQueue
}

func (c *Client) memoryUse(self bool) clientMemory {
	m := clientMemory{outQueue: c.omem.Load()}
	if !self {
		m.qbuf = c.qbuf.Load()
		m.qbufFree = max(initialReadBuf-m.qbuf, 0)
		m.replyBuf = initialReadBuf
		return m
	}
	m.qbuf, m.qbufFree = int64(c.w), int64(len(c.in)-c.w)
	for _, a := range c.ctx.Args {
		m.argv += int64(len(a))
	}
	if c.multi != nil {
		for _, q := range c.multi.cmds {
			m.multi += queuedCommandOverhead
			for _, a := range q.args {
				m.multi += int64(len(a)) + sliceHeaderSize
			}
		}
	}
	m.replyBuf, m.replyPeak, m.replyLen = int64(cap(c.out.B)), int64(len(c.out.B)), int64(len(c.out.B))
	return m
}

// The Go memory a queued command costs beyond its arguments' bytes: its
// entry in the queue, and a slice header per argument.
const (
	queuedCommandOverhead = 32
	sliceHeaderSize       = 24
)

func (c *Client) isUnix() bool {
	_, unix := c.conn.LocalAddr().(*net.UnixAddr)
	return unix
}

// peerAddr is the client's address as Redis shows it: "ip:port" ("[ip]:port"
// for IPv6), or "<unixsocket>:0" on the unix socket.
func (c *Client) peerAddr() string {
	if c.isUnix() {
		return c.s.cfg.UnixSocket() + ":0"
	}
	return c.conn.RemoteAddr().String()
}

// localAddr is the server side of the connection, in the same form.
func (c *Client) localAddr() string {
	if c.isUnix() {
		return c.s.cfg.UnixSocket() + ":0"
	}
	return c.conn.LocalAddr().String()
}

func (s *Server) clientsSnapshot() []*Client {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := make([]*Client, 0, len(s.clients))
	for _, c := range s.clients {
		list = append(list, c)
	}
	return list
}

// validClientType reports whether t names a client type, as CLIENT LIST and
// CLIENT KILL accept them.
func validClientType(t []byte) bool {
	switch strings.ToLower(string(t)) {
	case "normal", "master", "replica", "slave", "pubsub":
		return true
	}
	return false
}

// clientList handles CLIENT LIST, CLIENT LIST TYPE <type> and CLIENT LIST ID
// <id> ...; ids are listed in the order given, unknown ones skipped.
func clientList(x *Ctx) {
	args := x.Args
	var b strings.Builder
	switch {
	case len(args) == 4 && strings.EqualFold(string(args[2]), "type"):
		if !validClientType(args[3]) {
			x.W.Error("ERR Unknown client type '" + cstr.String(args[3]) + "'")
			return
		}
		for _, c := range sortedClients(x.s.clientsSnapshot()) {
			if c.isType(args[3]) {
				writeClientLines(&b, []*Client{c}, x.c)
			}
		}
	case len(args) > 3 && strings.EqualFold(string(args[2]), "id"):
		byID := map[uint64]*Client{}
		for _, c := range x.s.clientsSnapshot() {
			byID[c.id] = c
		}
		for _, a := range args[3:] {
			id, ok := strnum.ParseInt(a)
			if !ok {
				x.W.Error("ERR Invalid client ID")
				return
			}
			if c := byID[uint64(id)]; c != nil && id > 0 {
				writeClientLines(&b, []*Client{c}, x.c)
			}
		}
	case len(args) != 2:
		x.W.Error(errSyntax)
		return
	default:
		writeClientLines(&b, sortedClients(x.s.clientsSnapshot()), x.c)
	}
	x.W.Verbatim("txt", b.String())
}

func writeClientLines(b *strings.Builder, list []*Client, running *Client) {
	for _, c := range list {
		b.WriteString(c.infoLine(running))
		b.WriteByte('\n')
	}
}

func sortedClients(list []*Client) []*Client {
	for i := 1; i < len(list); i++ {
		for j := i; j > 0 && list[j].id < list[j-1].id; j-- {
			list[j], list[j-1] = list[j-1], list[j]
		}
	}
	return list
}

// clientKill handles both forms: CLIENT KILL addr:port and the filter form,
// whose options are checked in order as Redis does.
func clientKill(x *Ctx) {
	args := x.Args[2:]
	if len(args) == 1 {
		killed := false
		for _, c := range x.s.clientsSnapshot() {
			if c.peerAddr() == string(args[0]) {
				c.kill(x.c)
				killed = true
			}
		}
		if !killed {
			x.W.Error("ERR No such client")
			return
		}
		x.W.OK()
		return
	}
	var id uint64
	var addr, laddr []byte
	var typ []byte
	var user *acl.User
	skipMe := true
	var maxAge int64
	for i := 0; i < len(args); i += 2 {
		if i+1 >= len(args) {
			x.W.Error(errSyntax)
			return
		}
		v := args[i+1]
		switch strings.ToLower(string(args[i])) {
		case "id":
			n, ok := strnum.ParseInt(v)
			if !ok || n <= 0 {
				x.W.Error("ERR client-id should be greater than 0")
				return
			}
			id = uint64(n)
		case "type":
			if !validClientType(v) {
				x.W.Error("ERR Unknown client type '" + cstr.String(v) + "'")
				return
			}
			typ = v
		case "addr":
			addr = v
		case "laddr":
			laddr = v
		case "user":
			if user = x.s.user(string(v)); user == nil {
				x.W.Error("ERR No such user '" + cstr.String(v) + "'")
				return
			}
		case "skipme":
			switch strings.ToLower(string(v)) {
			case "yes":
				skipMe = true
			case "no":
				skipMe = false
			default:
				x.W.Error(errSyntax)
				return
			}
		case "maxage": // Redis 7.4
			n, ok := strnum.ParseInt(v)
			if !ok {
				x.W.Error("ERR maxage is not an integer or out of range")
				return
			}
			if n <= 0 {
				x.W.Error("ERR maxage should be greater than 0")
				return
			}
			maxAge = n
		default:
			x.W.Error(errSyntax)
			return
		}
	}
	killed := 0
	for _, c := range sortedClients(x.s.clientsSnapshot()) {
		switch {
		case typ != nil && !c.isType(typ),
			id != 0 && c.id != id,
			addr != nil && c.peerAddr() != string(addr),
			laddr != nil && c.localAddr() != string(laddr),
			user != nil && c.user.Load() != user,
			skipMe && c == x.c,
			maxAge != 0 && x.Now/1000-c.created.Unix() < maxAge: // whole seconds, as Redis
			continue
		}
		c.kill(x.c)
		killed++
	}
	x.W.Int(int64(killed))
}

// kill disconnects c. The caller's own connection closes after its reply.
func (c *Client) kill(by *Client) {
	if c == by {
		c.closeAfterReply = true
		return
	}
	// Gone from CLIENT LIST and the next CLIENT KILL at once, as in Redis,
	// not when its goroutine notices the closed connection.
	c.s.removeClient(c)
	c.disconnect()
}

func clientHelp(x *Ctx) {
	writeHelp(x, "CLIENT", []string{
		"CACHING (YES|NO)",
		"    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
		"GETREDIR",
		"    Return the client ID we are redirecting to when tracking is enabled.",
		"GETNAME",
		"    Return the name of the current connection.",
		"ID",
		"    Return the ID of the current connection.",
		"INFO",
		"    Return information about the current client connection.",
		"KILL <ip:port>",
		"    Kill connection made from <ip:port>.",
		"KILL <option> <value> [<option> <value> [...]]",
		"    Kill connections. Options are:",
		"    * ADDR (<ip:port>|<unixsocket>:0)",
		"      Kill connections made from the specified address",
		"    * LADDR (<ip:port>|<unixsocket>:0)",
		"      Kill connections made to specified local address",
		"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
		"      Kill connections by type.",
		"    * USER <username>",
		"      Kill connections authenticated by <username>.",
		"    * SKIPME (YES|NO)",
		"      Skip killing current connection (default: yes).",
		"    * ID <client-id>",
		"      Kill connections by client id.",
		"    * MAXAGE <maxage>",
		"      Kill connections older than the specified age.",
		"LIST [options ...]",
		"    Return information about client connections. Options:",
		"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
		"      Return clients of specified type.",
		"UNPAUSE",
		"    Stop the current client pause, resuming traffic.",
		"PAUSE <timeout> [WRITE|ALL]",
		"    Suspend all, or just write, clients for <timeout> milliseconds.",
		"REPLY (ON|OFF|SKIP)",
		"    Control the replies sent to the current connection.",
		"SETNAME <name>",
		"    Assign the name <name> to the current connection.",
		"SETINFO <option> <value>",
		"    Set client meta attr. Options are:",
		"    * LIB-NAME: the client lib name.",
		"    * LIB-VER: the client lib version.",
		"UNBLOCK <clientid> [TIMEOUT|ERROR]",
		"    Unblock the specified blocked client.",
		"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
		"         [OPTIN] [OPTOUT] [NOLOOP]",
		"    Control server assisted client side caching.",
		"TRACKINGINFO",
		"    Report tracking status for the current connection.",
		"NO-EVICT (ON|OFF)",
		"    Protect current client connection from eviction.",
		"NO-TOUCH (ON|OFF)",
		"    Will not touch LRU/LFU stats when this mode is on.",
	})
}

// writeHelp writes a HELP reply in Redis's layout.
func writeHelp(x *Ctx, name string, lines []string) { x.WriteHelp(name, lines) }
