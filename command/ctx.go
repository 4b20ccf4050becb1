package command

import (
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/resp"
	"github.com/keyhive/keyhive/values"
)

// Host is the server's state a handler may reach.
type Host interface {
	Config() *config.Config
	Keyspace() *keyspace.Keyspace
	// Propagating reports whether anything consumes the propagated commands.
	Propagating() bool
	// IsReplica reports whether the server replicates a master.
	IsReplica() bool
	// LRM reports whether eviction is least-recently-modified: access
	// clocks are set by writes only.
	LRM() bool
	// ClusterEnabled reports whether the server is a cluster node.
	ClusterEnabled() bool
	// TouchWatched tells WATCH that the keys of database db that exist in
	// one of dbs changed (FLUSHDB, FLUSHALL, SWAPDB).
	TouchWatched(db int, now int64, dbs ...*keyspace.DB)
	// FlushedAll tells persistence that FLUSHALL emptied the data set: a
	// background save of the old data is aborted and, with save points, the
	// empty data set is saved at once, as Redis does; it reports that save.
	FlushedAll(now int64) (saved bool)
	// SubkeyEvents reports whether a subkey channel is enabled for events
	// of class.
	SubkeyEvents(class config.KeyspaceEvents) bool
	// SharedIntegerPolicy is the maxmemory policy as far as Redis's shared
	// integers go ("" when maxmemory is not set).
	SharedIntegerPolicy() string
}

// Conn is the state of the client whose command runs that a handler may
// reach.
type Conn interface {
	// NoTouch reports CLIENT NO-TOUCH.
	NoTouch() bool
	// CountLookup counts a read's keyspace hit or miss, for INFO and the
	// key schema's statistics (touch: the read updates access clocks).
	CountLookup(db int, key []byte, hit, touch bool)
	// Notify publishes the keyspace event of class for key in database db,
	// as raised by this client.
	Notify(class config.KeyspaceEvents, event string, key []byte, db int)
	// NotifySubkeys publishes event of class for subkeys of key in
	// database db on the subkey channels, as raised by this client.
	NotifySubkeys(class config.KeyspaceEvents, event string, key []byte, subkeys *Subkeys, db int)
	// Block makes x, this client's command, wait as b says, or reply at
	// once where it cannot block (MULTI, scripts).
	Block(x *Ctx, b BlockRequest)
	// ElementExpired reports that x's command found an element of the
	// collection of type t at key (a hash field, a set member) expired
	// and deleted it: the server propagates its removal (HDEL, SREM)
	// ahead of the command, as the keyspace's expiry of a key propagates
	// its DEL.
	ElementExpired(x *Ctx, t keyspace.Type, key, element []byte)
	// InvalidateAll tells tracking clients that every key changed, by this
	// client's command (FLUSHDB, FLUSHALL).
	InvalidateAll()
	// ByScript reports whether the command was called by a script.
	ByScript() bool
	// ReadsAllKeys reports whether the user of x, this client's command,
	// may read every key (SORT's BY and GET patterns).
	ReadsAllKeys(x *Ctx) bool
	// Obeys reports whether the command ran already elsewhere (a master's
	// stream, the AOF): it applies what it finds and decides nothing.
	Obeys() bool
	// ClusterIncompatible reports that the command does what a cluster
	// node refuses (another database, a SORT pattern on another slot),
	// for Redis 8.0's cluster_incompatible_ops.
	ClusterIncompatible()
}

// Ctx is what a command handler works with. Handlers reply through W exactly
// once (an aggregate counts as one reply).
type Ctx struct {
	Args [][]byte
	W    *resp.Writer
	DB   *keyspace.DB
	Now  int64  // the command's time in Unix ms: one clock read per command
	Name string // the command's name, lower case ("parent|sub" for a subcommand)
	// Dirty counts the changes made, for propagation and INFO.
	Dirty int
	// Locks are the locks the dispatcher took for the command; lookups pass
	// them to the keyspace.
	Locks keyspace.LockSet
	// Collect gathers a reply whose length is known only at the end.
	Collect Collector
	// Reuse is a family's memory kept across the client's commands (a geo
	// search's results); the toolkit never looks at it.
	Reuse any

	host Host
	conn Conn
	also [][][]byte // what the command propagates instead of itself (AlsoPropagate)
	// toReplicas: the command propagates to replicas though it changed
	// nothing (PropagateToReplicas).
	toReplicas bool
	// scratch holds two buffers for building values (e.g. a listpack being
	// rebuilt): a rebuild reads one and writes the other, and the keyspace
	// copies the result, so they are reused across commands.
	scratch values.Scratch
	values  values.Env // what Env hands the values package, refreshed per call
	subkeys Subkeys    // the subkeys of the event being gathered (AddSubkey)
}

// Attach gives x the server and the client it runs commands for.
func (x *Ctx) Attach(h Host, c Conn) { x.host, x.conn = h, c }

// Host is the server the command runs in.
func (x *Ctx) Host() Host { return x.host }

// Conn is the client whose command runs.
func (x *Ctx) Conn() Conn { return x.conn }

// Config is the server's configuration.
func (x *Ctx) Config() *config.Config { return x.host.Config() }

// NextScratch returns the scratch buffer not handed out last, emptied.
func (x *Ctx) NextScratch() []byte { return x.scratch.Next() }

// KeepScratch keeps b, built in the last scratch buffer, as that buffer, so
// a capacity it grew to is reused; a huge one is let go.
func (x *Ctx) KeepScratch(b []byte) { x.scratch.Keep(b) }

// Touch reports whether a read updates access clocks: not under CLIENT
// NO-TOUCH, nor under an LRM policy, whose clocks only writes set.
func (x *Ctx) Touch() bool { return !x.conn.NoTouch() && !x.host.LRM() }

// LookupRead finds key for reading, counting a keyspace hit or miss (and
// notifying a miss).
func (x *Ctx) LookupRead(key []byte) (keyspace.Entry, bool) {
	return x.LookupReadTouch(key, x.Touch())
}

// LookupReadTouch is LookupRead for commands that look at a key without
// touching its access clock (EXISTS, TYPE, TTL) when touch is false.
func (x *Ctx) LookupReadTouch(key []byte, touch bool) (keyspace.Entry, bool) {
	e, ok := x.DB.LookupIn(&x.Locks, key, x.Now, touch)
	x.conn.CountLookup(x.DB.ID(), key, ok, touch)
	if !ok {
		x.Notify(config.EventKeyMiss, "keymiss", key)
	}
	return e, ok
}

// WrongType replies WRONGTYPE and reports true when a found entry is not of
// type t.
func (x *Ctx) WrongType(e *keyspace.Entry, found bool, t keyspace.Type) bool {
	if found && e.Type() != t {
		x.W.Error(ErrWrongType)
		return true
	}
	return false
}

// ReadTyped finds key for reading as type t; ok=false means another type
// (WRONGTYPE was replied), found=false no key.
func (x *Ctx) ReadTyped(key []byte, t keyspace.Type) (e keyspace.Entry, found, ok bool) {
	e, found = x.LookupRead(key)
	return e, found, !x.WrongType(&e, found, t)
}

// LookupWrite finds key for modification (no hit/miss accounting).
func (x *Ctx) LookupWrite(key []byte) (keyspace.Entry, bool) {
	return x.DB.LookupIn(&x.Locks, key, x.Now, true)
}

// AlreadyExpired reports whether the expire time at (Unix ms) that the
// command gives a key is past, so that the command deletes the key
// instead. As in Redis, never for a command that ran elsewhere (the AOF
// being loaded, a master's stream): the key keeps that time, and expiry
// once loading ends, or the master's DEL, removes it.
func (x *Ctx) AlreadyExpired(at int64) bool { return at <= x.Now && !x.conn.Obeys() }

// Collector gathers byte strings whose count is known only at the end (KEYS,
// SCAN): they are copied into one reused buffer, since the keyspace lends them
// only during a callback.
type Collector struct {
	buf   []byte
	spans []int
}

// Reset empties c.
func (c *Collector) Reset() {
	if cap(c.buf) > 1<<20 {
		c.buf, c.spans = nil, nil // do not keep a huge KEYS reply's memory per client
	}
	c.buf, c.spans = c.buf[:0], c.spans[:0]
}

// Add appends a copy of b.
func (c *Collector) Add(b []byte) {
	c.buf = append(c.buf, b...)
	c.spans = append(c.spans, len(c.buf))
}

// Len is the number of strings added.
func (c *Collector) Len() int { return len(c.spans) }

// At is the i-th string added, valid until the next Reset.
func (c *Collector) At(i int) []byte {
	lo := 0
	if i > 0 {
		lo = c.spans[i-1]
	}
	return c.buf[lo:c.spans[i]:c.spans[i]]
}

// AppendBytes appends b to the buffer without making it one of the strings
// (a family keeps its own offsets into Bytes), returning where it starts
// and ends.
func (c *Collector) AppendBytes(b []byte) (start, end int) {
	start = len(c.buf)
	c.buf = append(c.buf, b...)
	return start, len(c.buf)
}

// Bytes is the buffer the strings were copied into.
func (c *Collector) Bytes() []byte { return c.buf }

// WriteArray replies the strings as an array.
func (c *Collector) WriteArray(w *resp.Writer) {
	w.Array(len(c.spans))
	start := 0
	for _, end := range c.spans {
		w.Bulk(c.buf[start:end])
		start = end
	}
}
