package server

import (
	"bytes"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/keyhive/keyhive/cmdspec"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/resp"
	"github.com/keyhive/keyhive/values"
)

// Flags describe a command as COMMAND INFO reports it and as dispatch needs it.
type Flags uint64

// Command flags, named as Redis names them.
const (
	FlagWrite Flags = 1 << iota
	FlagReadonly
	FlagDenyOOM
	FlagAdmin
	FlagPubSub
	FlagNoScript
	FlagBlocking
	FlagLoading
	FlagStale
	FlagSkipMonitor
	FlagSkipSlowlog
	FlagFast
	FlagNoAuth
	// FlagMayReplicate is hidden by COMMAND INFO, as Redis hides it: the
	// command may propagate although it is not a write (PUBLISH, PFCOUNT's
	// cache, scripts), so read-only scripts refuse it.
	FlagMayReplicate
	FlagNoMandatoryKeys
	FlagProtected // hidden by COMMAND INFO, as in Redis: no spec sets it
	FlagNoMulti
	FlagMovableKeys // derived from the key specs, as Redis does
	FlagAllowBusy
	// FlagAllKeys is not a Redis flag: the command works on the whole keyspace or
	// on several databases and takes the exclusive lock.
	FlagAllKeys
	// FlagNoKeyspace is not a Redis flag: the command takes no lock. It
	// is derived for commands allowed while a script runs (allow_busy) that
	// name no keys, since a script holds the exclusive lock (SCRIPT KILL,
	// HELLO), and declared for BGSAVE and BGREWRITEAOF, whose snapshot
	// takes the exclusive lock itself, for a moment.
	FlagNoKeyspace
	// FlagNotQueued is not a Redis flag: inside MULTI the command runs at
	// once instead of being queued (EXEC, DISCARD, MULTI, WATCH, QUIT, RESET).
	FlagNotQueued
	// FlagEndsMulti is not a Redis flag: the command ends a transaction
	// (EXEC, DISCARD, QUIT, RESET), so it is not refused for lack of
	// memory inside MULTI.
	FlagEndsMulti
	// FlagSubscribedOK is not a Redis flag: a RESP2 client in subscribed
	// mode may run it.
	FlagSubscribedOK
	// FlagDiskErrorDenied is not a Redis flag: refused, beside the write
	// commands, while the AOF cannot be written (PING, as in Redis).
	FlagDiskErrorDenied
	// FlagSelectsDB is not a Redis flag: the command switches the client's
	// database (SELECT), so a transaction holding it locks every database.
	FlagSelectsDB
	// FlagChannelPublish, FlagChannelSubscribe and FlagChannelPattern are
	// not Redis flags: the command's arguments after its name are channels
	// it publishes to or subscribes to (patterns), which ACL checks.
	FlagChannelPublish
	FlagChannelSubscribe
	FlagChannelPattern
	FlagAsking
	FlagNoAsyncLoading
)

// flagNames are the flags COMMAND INFO shows, in Redis's order.
var flagNames = []struct {
	f    Flags
	name string
}{
	{FlagWrite, "write"}, {FlagReadonly, "readonly"}, {FlagDenyOOM, "denyoom"},
	{FlagAdmin, "admin"}, {FlagPubSub, "pubsub"}, {FlagNoScript, "noscript"},
	{FlagBlocking, "blocking"}, {FlagLoading, "loading"}, {FlagStale, "stale"},
	{FlagSkipMonitor, "skip_monitor"}, {FlagSkipSlowlog, "skip_slowlog"}, {FlagAsking, "asking"},
	{FlagFast, "fast"}, {FlagNoAuth, "no_auth"}, {FlagNoMandatoryKeys, "no_mandatory_keys"},
	{FlagNoAsyncLoading, "no_async_loading"}, {FlagNoMulti, "no_multi"},
	{FlagMovableKeys, "movablekeys"}, {FlagAllowBusy, "allow_busy"},
}

// internalFlagNames are Keyhive's own flags as the spec writes them.
var internalFlagNames = map[string]Flags{
	"allkeys": FlagAllKeys, "nokeyspace": FlagNoKeyspace, "not_queued": FlagNotQueued,
	"ends_multi": FlagEndsMulti, "subscribed_ok": FlagSubscribedOK, "disk_error_denied": FlagDiskErrorDenied,
	"selects_db": FlagSelectsDB, "channel_publish": FlagChannelPublish, "channel_subscribe": FlagChannelSubscribe,
	"channel_pattern": FlagChannelPattern, "may_replicate": FlagMayReplicate,
}

func parseFlags(s string) Flags {
	var f Flags
	for _, word := range strings.Fields(s) {
		if g, ok := internalFlagNames[word]; ok {
			f |= g
			continue
		}
		found := false
		for _, fn := range flagNames {
			if fn.name == word {
				f |= fn.f
				found = true
			}
		}
		if !found {
			panic("server: unknown command flag " + word)
		}
	}
	return f
}

// Command is one entry of the command table: the spec it comes from (what
// COMMAND reports, the key specs), what dispatch checks, and the handler.
type Command struct {
	Name  string // lower case; "parent|sub" for subcommands
	Arity int    // exact when positive, minimum when negative (name included)
	Flags Flags
	Run   func(x *Ctx)
	Sub   map[string]*Command

	spec *cmdspec.Spec
	// categories are the ACL categories, in COMMAND INFO's order.
	categories []string

	// id indexes the per-server statistics; the table itself is shared by
	// every server in the process and holds no mutable state.
	id int
}

// table is the one command table: dispatch, COMMAND and INFO commandstats all
// read it. It is built from cmdspec; family files bind the handlers from
// their init functions.
var table = buildTable()

// commandCount is the number of commands and subcommands.
var commandCount int

// commandStats are one server's counters for one command (INFO commandstats).
type commandStats struct {
	calls, usec, rejected, failed atomic.Int64
	latency                       atomic.Pointer[latencyHistogram] // latency.go
}

func buildTable() map[string]*Command {
	t := map[string]*Command{}
	for _, s := range cmdspec.Commands() {
		c := newCommand(s)
		for _, sub := range s.Subcommands {
			if c.Sub == nil {
				c.Sub = map[string]*Command{}
			}
			c.Sub[sub.Name] = newCommand(sub)
		}
		t[s.Name] = c
	}
	return t
}

func newCommand(s *cmdspec.Spec) *Command {
	c := &Command{
		Name: s.FullName, Arity: s.Arity, Flags: parseFlags(s.Flags), spec: s,
		categories: strings.Fields(s.ACL), id: commandCount,
	}
	commandCount++
	if s.MovableKeys() {
		c.Flags |= FlagMovableKeys
	}
	if c.Flags&FlagAllowBusy != 0 && !s.HasKeys() {
		c.Flags |= FlagNoKeyspace
	}
	return c
}

// bind gives a command its handler; every family file binds its commands.
func bind(name string, run func(x *Ctx)) {
	c := table[name]
	if c == nil || c.Run != nil {
		panic("server: no command to bind, or bound twice: " + name)
	}
	c.Run = run
}

// bindSub gives a subcommand (CONFIG GET, ...) its handler.
func bindSub(parent, name string, run func(x *Ctx)) {
	c := table[parent].Sub[name]
	if c == nil || c.Run != nil {
		panic("server: no subcommand to bind, or bound twice: " + parent + "|" + name)
	}
	c.Run = run
}

// aclCategories is Redis's ACL category table; ACL CAT lists categories in
// this order.
var aclCategories = []string{
	"@keyspace", "@read", "@write", "@set", "@sortedset", "@list", "@hash", "@string",
	"@bitmap", "@hyperloglog", "@geo", "@stream", "@pubsub", "@admin", "@fast", "@slow",
	"@blocking", "@dangerous", "@connection", "@transaction", "@scripting",
}

// AllCategories returns the command's ACL categories as COMMAND INFO lists
// them.
func (c *Command) AllCategories() []string { return c.categories }

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// keyArgs appends the command's key arguments to dst: every key it may
// touch, for locks, MULTI and tracking. all reports that they cannot be
// known from the arguments: the command must take every lock.
func (c *Command) keyArgs(args [][]byte, dst [][]byte) (keys [][]byte, all bool) {
	if first, lastKey, step, ok := c.spec.SimpleKeys(); ok {
		last := lastKey
		if last >= 0 {
			last += first
		} else {
			last += len(args)
		}
		for i := first; i <= last && i < len(args); i += step {
			dst = append(dst, args[i])
		}
		return dst, false
	}
	var refs []cmdspec.KeyRef
	if c.spec.KeyFunc == nil {
		var buf [8]cmdspec.KeyRef
		refs, all = c.spec.SpecLockKeys(args, buf[:0])
		for _, k := range refs {
			dst = append(dst, args[k.Pos])
		}
		return dst, all
	}
	// A key function is called through a pointer, so its buffer would
	// escape: it is pooled.
	buf := keyRefPool.Get().(*[]cmdspec.KeyRef)
	*buf, all = c.spec.LockKeys(args, (*buf)[:0])
	for _, k := range *buf {
		dst = append(dst, args[k.Pos])
	}
	keyRefPool.Put(buf)
	return dst, all
}

var keyRefPool = sync.Pool{New: func() any { return new([]cmdspec.KeyRef) }}

// keyRefs appends the command's keys with their key spec flags as Redis
// finds them for COMMAND GETKEYS and ACL checks.
func (c *Command) keyRefs(args [][]byte, dst []cmdspec.KeyRef) []cmdspec.KeyRef {
	return c.spec.GetKeys(args, dst)
}

// findCommand finds the command args names, descending into its
// subcommand when it is a container and one is named; nil for an unknown
// command or subcommand. Arity is not checked (hasArity).
func findCommand(args [][]byte) *Command {
	cmd := lookupCommand(table, args[0])
	if cmd != nil && cmd.Sub != nil && len(args) >= 2 {
		cmd = lookupCommand(cmd.Sub, args[1])
	}
	return cmd
}

// hasArity reports whether n arguments, the name included, fit the
// command's arity.
func (c *Command) hasArity(n int) bool {
	return (c.Arity <= 0 || n == c.Arity) && n >= -c.Arity
}

// commandByFullName finds "get" or "config|get", as COMMAND INFO and ACL
// rules name commands.
func commandByFullName(name string) *Command {
	parent, sub, isSub := strings.Cut(strings.ToLower(name), "|")
	c := table[parent]
	if c == nil || !isSub {
		return c
	}
	return c.Sub[sub]
}

// lookupCommand finds a command by a client-supplied name without allocating.
func lookupCommand(m map[string]*Command, name []byte) *Command {
	var buf [32]byte
	if len(name) > len(buf) {
		return m[strings.ToLower(string(name))]
	}
	lower := buf[:len(name)]
	for i, c := range name {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	return m[string(lower)]
}

// Ctx is what a command handler works with. Handlers reply through W exactly
// once (an aggregate counts as one reply).
type Ctx struct {
	s     *Server
	c     *Client
	cmd   *Command
	Args  [][]byte
	W     *resp.Writer
	DB    *keyspace.DB
	Now   int64 // the command's time in Unix ms: one clock read per command
	dirty int   // changes made, for propagation and INFO
	// scriptErrorCounted: the script the command ran replied an error that
	// one of its commands got and INFO counted already (read under the
	// script's lock, as the engine's answer is for its last run).
	scriptErrorCounted bool
	// cannotBlock makes blocking commands reply as on timeout: call sets it
	// inside EXEC and scripts, and for a client that obeys (blockingDenied).
	cannotBlock bool

	also     [][][]byte // what the command propagates instead of itself (alsoPropagate)
	locks    keyspace.LockSet
	keyBuf   [][]byte
	nsRefs   []cmdspec.KeyRef // a write's keys, for the namespace policies
	collect  collector
	geoFound []geoPoint // a geo search's results, reused across commands
	// scratch holds two buffers for building values (e.g. a listpack being
	// rebuilt): a rebuild reads one and writes the other, and the keyspace
	// copies the result, so they are reused across commands.
	scratch values.Scratch
	values  values.Env // what env hands the values package, refreshed per call
}

// nextScratch returns the scratch buffer not handed out last, emptied.
func (x *Ctx) nextScratch() []byte { return x.scratch.Next() }

// keepScratch keeps b, built in the last scratch buffer, as that buffer, so a
// capacity it grew to is reused; a huge one is let go.
func (x *Ctx) keepScratch(b []byte) { x.scratch.Keep(b) }

// collector gathers byte strings whose count is known only at the end (KEYS,
// SCAN): they are copied into one reused buffer, since the keyspace lends them
// only during a callback.
type collector struct {
	buf   []byte
	spans []int
}

func (c *collector) reset() {
	if cap(c.buf) > 1<<20 {
		c.buf, c.spans = nil, nil // do not keep a huge KEYS reply's memory per client
	}
	c.buf, c.spans = c.buf[:0], c.spans[:0]
}

func (c *collector) add(b []byte) {
	c.buf = append(c.buf, b...)
	c.spans = append(c.spans, len(c.buf))
}

func (c *collector) writeArray(w *resp.Writer) {
	w.Array(len(c.spans))
	start := 0
	for _, end := range c.spans {
		w.Bulk(c.buf[start:end])
		start = end
	}
}

// Error texts clients match on, as Redis writes them.
const (
	errSyntax      = "ERR syntax error"
	errNotInt      = "ERR value is not an integer or out of range"
	errNotFloat    = "ERR value is not a valid float"
	errWrongType   = "WRONGTYPE Operation against a key holding the wrong kind of value"
	errNoSuchKey   = "ERR no such key"
	errOverflow    = "ERR increment or decrement would overflow"
	errDBIndex     = "ERR DB index is out of range"
	errInvalidDB   = "ERR invalid DB index"
	errNoAuth      = "NOAUTH Authentication required."
	errSameObject  = "ERR source and destination objects are the same"
	errStringLimit = "ERR string exceeds maximum allowed size (proto-max-bulk-len)"
)

func errArity(name string) string {
	return "ERR wrong number of arguments for '" + name + "' command"
}

func errUnknownCommand(args [][]byte) string {
	var b strings.Builder
	b.WriteString("ERR unknown command '")
	b.Write(truncate(args[0], 128))
	b.WriteString("', with args beginning with: ")
	used := 0
	for _, a := range args[1:] {
		if used >= 128 {
			break
		}
		a = truncate(a, 128-used)
		b.WriteByte('\'')
		b.Write(a)
		b.WriteString("' ")
		used += len(a) + 3
	}
	return b.String()
}

func errUnknownSubcommand(parent string, sub []byte) string {
	return "ERR unknown subcommand '" + string(truncate(sub, 128)) + "'. Try " + strings.ToUpper(parent) + " HELP."
}

// cBytes is b up to its first NUL byte: what Redis sees of an argument when it
// compares it with strcasecmp or prints it with %s.
func cBytes(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// truncate is b as C's "%.<n>s" prints it: up to a NUL byte, at most n bytes.
func truncate(b []byte, n int) []byte {
	b = cBytes(b)
	if len(b) > n {
		return b[:n]
	}
	return b
}

// cArgIs reports whether arg names the option s (lower case), compared as
// Redis's strcasecmp does.
func cArgIs(arg []byte, s string) bool {
	arg = cBytes(arg)
	if len(arg) != len(s) {
		return false
	}
	for i, c := range arg {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// cString is cBytes as a string.
func cString(b []byte) string { return string(cBytes(b)) }
