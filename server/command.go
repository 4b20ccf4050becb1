package server

import (
	"bytes"
	"strings"
	"sync/atomic"

	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/resp"
	"github.com/keyhive/keyhive/values"
)

// Flags describe a command as COMMAND INFO reports it and as dispatch needs it.
type Flags uint32

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
	FlagMayReplicate
	FlagNoMandatoryKeys
	FlagProtected
	FlagNoMulti
	FlagMovableKeys // derived: the command has a key-extraction function
	FlagAllowBusy
	// FlagAllKeys is not a Redis flag: the command works on the whole keyspace or
	// on several databases and takes the exclusive lock.
	FlagAllKeys
	// FlagNoKeyspace is not a Redis flag: derived for commands allowed while
	// a script runs (allow_busy) that name no keys, it makes them take no
	// lock, since a script holds the exclusive lock (SCRIPT KILL, HELLO).
	FlagNoKeyspace
)

var flagNames = []struct {
	f    Flags
	name string
}{
	{FlagWrite, "write"}, {FlagReadonly, "readonly"}, {FlagDenyOOM, "denyoom"},
	{FlagAdmin, "admin"}, {FlagPubSub, "pubsub"}, {FlagNoScript, "noscript"},
	{FlagBlocking, "blocking"}, {FlagLoading, "loading"}, {FlagStale, "stale"},
	{FlagSkipMonitor, "skip_monitor"}, {FlagSkipSlowlog, "skip_slowlog"},
	{FlagFast, "fast"}, {FlagNoAuth, "no_auth"}, {FlagMayReplicate, "may_replicate"},
	{FlagNoMandatoryKeys, "no_mandatory_keys"}, {FlagProtected, "protected"},
	{FlagNoMulti, "no_multi"}, {FlagMovableKeys, "movablekeys"}, {FlagAllowBusy, "allow_busy"},
}

func parseFlags(s string) Flags {
	var f Flags
	for _, word := range strings.Fields(s) {
		if word == "allkeys" {
			f |= FlagAllKeys
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

// Command is one entry of the command table: what COMMAND reports, what
// dispatch checks, and the handler.
type Command struct {
	Name     string // lower case; "parent|sub" for subcommands
	Arity    int    // exact when positive, minimum when negative (name included)
	Flags    Flags
	FirstKey int // key positions as COMMAND INFO reports them
	LastKey  int // negative counts from the end
	Step     int
	// Categories are the ACL categories beyond those implied by the flags.
	Categories []string
	Tips       []string // COMMAND INFO's tips (commandTips)
	Group      string   // COMMAND DOCS group
	Summary    string
	Since      string
	Run        func(x *Ctx)
	Sub        map[string]*Command

	// keys returns the key arguments when they are not a simple range
	// (e.g. COPY's destination); nil uses FirstKey/LastKey/Step.
	keys func(args [][]byte, dst [][]byte) [][]byte
	// lockAll, when set, makes the command take the exclusive lock for the
	// arguments it accepts (DEBUG RELOAD).
	lockAll func(args [][]byte) bool

	// id indexes the per-server statistics; the table itself is shared by
	// every server in the process and holds no mutable state.
	id int
}

// spec is the compact form commands register with.
type spec struct {
	name     string
	arity    int
	flags    string
	first    int
	last     int
	step     int
	category string // ACL categories, space separated, without the implied ones
	group    string
	summary  string
	since    string
	run      func(x *Ctx)
}

// table is the one command table: dispatch, COMMAND and INFO commandstats all
// read it. Command family files add to it from init functions.
var table = map[string]*Command{}

// commandCount is the number of commands and subcommands registered.
var commandCount int

// commandStats are one server's counters for one command (INFO commandstats).
type commandStats struct {
	calls, usec, rejected, failed atomic.Int64
}

func newCommand(s spec, name string) *Command {
	c := &Command{
		Name: name, Arity: s.arity, Flags: parseFlags(s.flags), Tips: strings.Fields(commandTips[name]),
		FirstKey: s.first, LastKey: s.last, Step: s.step,
		Group: s.group, Summary: s.summary, Since: s.since, Run: s.run,
		id: commandCount,
	}
	commandCount++
	if c.Flags&FlagAllowBusy != 0 && c.FirstKey == 0 {
		c.Flags |= FlagNoKeyspace
	}
	if s.category != "" {
		c.Categories = strings.Fields(s.category)
	}
	return c
}

func register(specs ...spec) {
	for _, s := range specs {
		if _, dup := table[s.name]; dup {
			panic("server: command registered twice: " + s.name)
		}
		table[s.name] = newCommand(s, s.name)
	}
}

// registerSub registers subcommands of a container command (CONFIG GET, ...).
func registerSub(parent string, specs ...spec) {
	p := table[parent]
	if p.Sub == nil {
		p.Sub = map[string]*Command{}
	}
	for _, s := range specs {
		p.Sub[s.name] = newCommand(s, parent+"|"+s.name)
	}
}

// aclCategories is Redis's ACL category table; COMMAND INFO and ACL CAT list
// categories in this order.
var aclCategories = []string{
	"@keyspace", "@read", "@write", "@set", "@sortedset", "@list", "@hash", "@string",
	"@bitmap", "@hyperloglog", "@geo", "@stream", "@pubsub", "@admin", "@fast", "@slow",
	"@blocking", "@dangerous", "@connection", "@transaction", "@scripting",
}

// AllCategories returns the command's ACL categories, explicit and implied by
// its flags, in Redis's category order, as COMMAND INFO lists them.
func (c *Command) AllCategories() []string {
	set := map[string]bool{}
	for _, cat := range c.Categories {
		set[cat] = true
	}
	set["@write"] = set["@write"] || c.Flags&FlagWrite != 0
	set["@read"] = set["@read"] || (c.Flags&FlagReadonly != 0 && !set["@scripting"])
	set["@admin"] = set["@admin"] || c.Flags&FlagAdmin != 0
	set["@dangerous"] = set["@dangerous"] || c.Flags&FlagAdmin != 0
	set["@pubsub"] = set["@pubsub"] || c.Flags&FlagPubSub != 0
	set["@fast"] = set["@fast"] || c.Flags&FlagFast != 0
	set["@blocking"] = set["@blocking"] || c.Flags&FlagBlocking != 0
	set["@slow"] = set["@slow"] || !set["@fast"] // not @fast is @slow
	var cats []string
	for _, cat := range aclCategories {
		if set[cat] {
			cats = append(cats, cat)
			delete(set, cat)
		}
	}
	for _, cat := range c.Categories { // any category Redis does not have, last
		if set[cat] {
			cats = append(cats, cat)
			delete(set, cat)
		}
	}
	return cats
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// keyArgs appends the command's key arguments to dst.
func (c *Command) keyArgs(args [][]byte, dst [][]byte) [][]byte {
	if c.keys != nil {
		return c.keys(args, dst)
	}
	if c.FirstKey <= 0 {
		return dst
	}
	last := c.LastKey
	if last < 0 {
		last += len(args)
	}
	for i := c.FirstKey; i <= last && i < len(args); i += c.Step {
		dst = append(dst, args[i])
	}
	return dst
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
	// cannotBlock makes blocking commands reply as on timeout (inside MULTI
	// and scripts).
	cannotBlock bool
	// inExec collects what EXEC's commands propagate, to wrap it in MULTI
	// and EXEC.
	inExec   bool
	execProp []propagated
	also     [][][]byte // what the command propagates instead of itself (alsoPropagate)
	locks    keyspace.LockSet
	keyBuf   [][]byte
	collect  collector
	geoFound []geoPoint // a geo search's results, reused across commands
	// scratch holds two buffers for building values (e.g. a listpack being
	// rebuilt): a rebuild reads one and writes the other, and the keyspace
	// copies the result, so they are reused across commands.
	scratch values.Scratch
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
