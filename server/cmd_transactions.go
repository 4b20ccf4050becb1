package server

import (
	"sync"
	"sync/atomic"

	"github.com/keyhive/keyhive/cmdspec"
	"github.com/keyhive/keyhive/keyspace"
)

// Transactions as Redis runs them: MULTI queues commands, EXEC runs the queue
// holding the locks of every key it names (or all of them), so no other
// client sees a state in between; WATCH makes EXEC fail if a watched key was
// modified (including by expiry or a flush) since.

func init() {
	cmdExec = table["exec"]
	bind("multi", multiCommand)
	bind("exec", execCommand)
	bind("discard", discardCommand)
	bind("unwatch", unwatchCommand)
	bind("watch", watchCommand)
}

var cmdExec *Command

// transaction is a client's MULTI state: the queued commands, with copies of
// their arguments (the read buffer is reused), and the keys EXEC must lock.
type transaction struct {
	cmds    []queued
	keys    [][]byte
	lockAll bool          // a command needs every lock (several databases, SELECT)
	flags   cmdspec.Flags // of all the queued commands: EXEC is a write if one is
	aborted bool          // a command was rejected while queueing: EXEC fails
}

type queued struct {
	cmd  *Command
	args [][]byte
}

// runsInMulti reports whether cmd runs at once inside MULTI instead of being
// queued, as Redis's processCommand decides.
func runsInMulti(cmd *Command) bool { return cmd.Flags&cmdspec.FlagNotQueued != 0 }

// setMulti enters (t) or leaves (nil) MULTI.
func (c *Client) setMulti(t *transaction) {
	c.multi = t
	c.queued.Store(-1)
	if t != nil {
		c.queued.Store(0)
	}
}

// queue adds a command to the transaction and replies QUEUED.
func (c *Client) queue(cmd *Command, args [][]byte) {
	t := c.multi
	q := queued{cmd: cmd, args: cloneArgs(args)}
	t.cmds = append(t.cmds, q)
	t.flags |= cmd.Flags
	if cmd.Flags&(cmdspec.FlagAllKeys|cmdspec.FlagSelectsDB) != 0 {
		t.lockAll = true
	}
	var all bool
	if t.keys, all = cmd.keyArgs(q.args, t.keys); all {
		t.lockAll = true
	}
	c.queued.Store(int32(len(t.cmds)))
	c.out.Simple("QUEUED")
}

func multiCommand(x *Ctx) {
	if x.c.multi != nil {
		x.W.Error("ERR MULTI calls can not be nested")
		return
	}
	x.c.setMulti(&transaction{})
	x.W.OK()
}

func discardCommand(x *Ctx) {
	if x.c.multi == nil {
		x.W.Error("ERR DISCARD without MULTI")
		return
	}
	x.c.setMulti(nil)
	x.s.watches.unwatchAll(x.c)
	x.W.OK()
}

// execCommand runs the queue. call has taken the locks of every queued key
// (lockSet), so the commands run here one after another as one step.
func execCommand(x *Ctx) {
	c := x.c
	t := c.multi
	if t == nil {
		x.W.Error("ERR EXEC without MULTI")
		return
	}
	c.setMulti(nil)
	defer x.s.watches.unwatchAll(c)
	if t.aborted {
		x.W.Error("EXECABORT Transaction discarded because of previous errors.")
		return
	}
	if x.s.watches.changed(x, c) {
		x.W.NullArray()
		return
	}
	// Unwatched before the commands run, as in Redis (CLIENT INFO in the
	// transaction says watch=0); the locks taken for the keys stay held.
	x.s.watches.unwatchAll(c)
	x.W.Array(len(t.cmds))
	// The commands run nested in the EXEC (call): what they propagate is
	// published with the EXEC, as one unit.
	dirty := 0
	for _, q := range t.cmds {
		if c.dispatch(q.args, fromExec) {
			dirty += x.Dirty
		}
	}
	x.setCommand(cmdExec)
	x.Dirty = dirty
	x.PropagateNone()
}

// lockSet fills the locks EXEC needs: the queued commands' keys and the
// watched ones, which EXEC looks up.
func (t *transaction) lockSet(x *Ctx, c *Client) {
	db := int(c.db.Load())
	all := t == nil || t.lockAll
	for _, bk := range c.watched {
		all = all || bk.db != db
	}
	if all {
		x.Locks.All()
		return
	}
	x.keyBuf = append(x.keyBuf[:0], t.keys...)
	for _, k := range t.keys {
		x.Locks.Add(k)
	}
	for _, bk := range c.watched {
		x.Locks.AddShardOf([]byte(bk.key))
	}
}

func watchCommand(x *Ctx) {
	if x.c.multi != nil {
		x.W.Error("ERR WATCH inside MULTI is not allowed")
		return
	}
	for _, key := range x.Args[1:] {
		// Looked up first, so a key already expired is removed now and its
		// removal does not count as a change, as in Redis.
		x.DB.Lookup(key, x.Now, false)
		x.s.watches.watch(x.c, x.DB.ID(), key)
	}
	x.W.OK()
}

func unwatchCommand(x *Ctx) {
	x.s.watches.unwatchAll(x.c)
	x.W.OK()
}

// watches maps each watched key to the clients watching it. Every change to
// a key passes through touched (the keyspace's Modified hook), which marks
// those clients' transactions as failed.
type watches struct {
	mu      sync.Mutex
	count   atomic.Int64 // watched keys: changes look at nothing while it is 0
	clients map[blockKey][]*Client
}

func (w *watches) watch(c *Client, db int, key []byte) {
	bk := blockKey{db, string(key)}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, k := range c.watched {
		if k == bk {
			return
		}
	}
	if w.clients == nil {
		w.clients = make(map[blockKey][]*Client)
	}
	w.clients[bk] = append(w.clients[bk], c)
	c.watched = append(c.watched, bk)
	c.nWatched.Store(int32(len(c.watched)))
	w.count.Add(1)
}

func (w *watches) unwatchAll(c *Client) {
	if len(c.watched) == 0 {
		c.watchBroken.Store(false)
		return
	}
	w.mu.Lock()
	for _, bk := range c.watched {
		removeFrom(w.clients, bk, c)
		w.count.Add(-1)
	}
	w.mu.Unlock()
	c.watched = c.watched[:0]
	c.nWatched.Store(0)
	c.watchBroken.Store(false)
}

// touched marks the transactions watching key in db as failed.
func (w *watches) touched(db int, key []byte) {
	if w.count.Load() == 0 {
		return
	}
	w.mu.Lock()
	for _, c := range w.clients[blockKey{db, string(key)}] {
		c.watchBroken.Store(true)
	}
	w.mu.Unlock()
}

// touchedExisting marks the transactions watching a key of db that exists in
// one of dbs: a FLUSH or SWAPDB changes only keys that were there.
func (w *watches) touchedExisting(db int, now int64, dbs ...*keyspace.DB) {
	if w.count.Load() == 0 {
		return
	}
	// Looked up outside mu: a lookup may expire the key, which calls touched.
	var keys []string
	w.mu.Lock()
	for bk := range w.clients {
		if bk.db == db {
			keys = append(keys, bk.key)
		}
	}
	w.mu.Unlock()
	for _, key := range keys {
		for _, d := range dbs {
			if _, found := d.Lookup([]byte(key), now, false); found {
				w.mu.Lock()
				for _, c := range w.clients[blockKey{db, key}] {
					c.watchBroken.Store(true)
				}
				w.mu.Unlock()
				break
			}
		}
	}
}

// changed reports whether a key c watches changed since WATCH. Watched keys
// are looked up first: one that expired meanwhile is removed, which counts as
// a change, as in Redis 7.
func (w *watches) changed(x *Ctx, c *Client) bool {
	for _, bk := range c.watched {
		x.s.ks.DB(bk.db).Lookup([]byte(bk.key), x.Now, false)
	}
	return c.watchBroken.Load()
}
