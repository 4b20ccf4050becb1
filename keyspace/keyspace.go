// Package keyspace stores the databases: keys, values and per-key metadata, with
// locking that lets single-key commands on different shards run in parallel.
package keyspace

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Shards per database. Shard = slot % Shards, so a shard holds exactly the keys
// of SlotCount/Shards cluster slots: moving a slot never splits a shard's lock.
const Shards = 1024

// Type is a value's data type.
type Type uint8

// Data types, in the order Redis numbers them.
const (
	TypeString Type = iota
	TypeList
	TypeSet
	TypeZSet
	TypeHash
	TypeStream = 6
	// TypeArray is Redis 8.8's array, a keyspace object (internal/array);
	// 7 is the number after stream free in the 4 type bits.
	TypeArray Type = 7
	// TypeJSON is a JSON document (Redis 8's JSON, a module type there).
	// Module types have no number of Redis's own; they count down from 15,
	// the last the entry's 4 type bits hold.
	TypeJSON = 15
	// TypeVectorSet is a vector set (Redis 8's vectorset module type), a
	// keyspace object (internal/vset).
	TypeVectorSet Type = 14
)

// The probabilistic types, Redis 8's Bloom module types; each value is one
// flat byte string (internal/prob).
const (
	TypeBloom Type = 8 + iota
	TypeCuckoo
	TypeCMS
	TypeTopK
	TypeTDigest
)

// Encoding is a value's in-memory representation, as OBJECT ENCODING names it.
type Encoding uint8

// Encodings: of strings, then of collections (compact inline forms and the
// object forms they convert to past Redis's size thresholds).
const (
	EncRaw Encoding = iota
	EncInt
	EncEmbstr
	EncListpack
	EncIntset
	EncHashtable
	EncQuicklist
	EncSkiplist
	EncStream
	EncListpackEx // a small hash with field expire times (Redis 7.4)
	// A hash Redis would hold as a hashtable (a field or value past
	// hash-max-listpack-value) kept packed while it is small: OBJECT
	// ENCODING says hashtable, the memory is a listpack's (values.HashView).
	EncHashPacked
	EncHashPackedEx // the same with field expire times
	EncSlicedArray  // an array (Redis 8.8 names its one encoding so)
)

// Name returns the type's name as TYPE replies it.
func (t Type) Name() string {
	switch t {
	case TypeString:
		return "string"
	case TypeList:
		return "list"
	case TypeSet:
		return "set"
	case TypeZSet:
		return "zset"
	case TypeHash:
		return "hash"
	case TypeStream:
		return "stream"
	case TypeBloom:
		return "MBbloom--"
	case TypeCuckoo:
		return "MBbloomCF"
	case TypeCMS:
		return "CMSk-TYPE"
	case TypeTopK:
		return "TopK-TYPE"
	case TypeTDigest:
		return "TDIS-TYPE"
	case TypeJSON:
		return "ReJSON-RL"
	case TypeVectorSet:
		return "vectorset"
	case TypeArray:
		return "array"
	}
	return "none"
}

// Name returns the encoding's name as OBJECT ENCODING replies it.
func (e Encoding) Name() string {
	switch e {
	case EncInt:
		return "int"
	case EncEmbstr:
		return "embstr"
	case EncListpack:
		return "listpack"
	case EncIntset:
		return "intset"
	case EncHashtable, EncHashPacked, EncHashPackedEx:
		return "hashtable"
	case EncQuicklist:
		return "quicklist"
	case EncSkiplist:
		return "skiplist"
	case EncStream:
		return "stream"
	case EncListpackEx:
		return "listpackex"
	case EncSlicedArray:
		return "sliced-array"
	}
	return "raw"
}

// Hooks receive what happens to keys: a key that expired, lazily or in the
// active cycle, and every change to a key (written, expire time changed,
// deleted or expired; not flushes, which the caller knows about). They run
// with the key's shard locked and must not call back into the keyspace.
type Hooks struct {
	Expired func(db int, key []byte)
	// Modified gets the Owner of the LockSet under which the change was
	// made (nil for the keyspace's own expiry cycle).
	Modified func(db int, key []byte, owner Owner)
	// Created gets every key added to a database that did not hold it
	// (Redis's "new" keyspace event), with the same owner as Modified.
	Created func(db int, key []byte, owner Owner)
	// Len measures a collection for the Schema's KeySize: its elements,
	// held compact (value) or as an object (obj, nil when compact); 0 for
	// a type INFO keysizes does not count. The keyspace does not know the
	// collections' forms (package values does).
	Len func(t Type, enc Encoding, value []byte, obj Object) int64
}

// Keyspace holds all databases.
//
// Locking: a command on known keys takes the shared lock plus its keys' shard
// locks (Lock, in shard order); a command that needs the whole keyspace (FLUSHALL,
// SWAPDB, KEYS, and later MULTI/EXEC and scripts) takes the exclusive lock
// (LockAll). Entry bytes returned by lookups stay valid until Unlock.
type Keyspace struct {
	all   sync.RWMutex
	dbs   []atomic.Pointer[DB] // atomic: INFO reads them while SWAPDB swaps
	seed  maphash.Seed
	hooks Hooks
	lfu   atomic.Pointer[lfuParams] // nil: LRU access clocks
	lrfu  lrfuClock                 // the LRFU policy's clock

	ExpiredKeys atomic.Int64 // keys removed because their TTL passed
	// listpackSets is set once a set is stored as a listpack (see
	// HeldListpackSets).
	listpackSets atomic.Bool
	// Still keeps the data set as it is (CLIENT PAUSE): expired keys are
	// reported missing but not removed.
	Still atomic.Bool
	// Loading is set while a file (the AOF) is replayed: as in Redis,
	// nothing expires then, so a key that got its expire time in the past
	// from the file keeps taking the file's commands, and expires once
	// loading ends.
	Loading atomic.Bool
	// replica: expiry is a replica's (SetReplica); master owns the locks
	// of its master's commands.
	replica atomic.Bool
	master  atomic.Pointer[Owner]
	own     ownKeys

	allOwner  Owner           // the Owner holding the exclusive lock
	exclusive bool            // the exclusive lock is held
	marked    []*garbageMarks // the shard arrays its holder left garbage in
	snap      *Snapshot       // a background save in progress (set under the exclusive lock)
	snapping  sync.Mutex      // held from BeginSnapshot to End
	acct      accounting

	// schema is told of every key created, deleted, resized or written
	// (nil: none is set, nothing is attributed).
	schema atomic.Pointer[schemaRef]

	// The running snapshot's keys at its instant (0: none runs), and those
	// its saver has written so far: its progress, for metrics and INFO.
	snapKeys, snapSaved atomic.Int64
	// The bytes of early records the running (or last) snapshot holds,
	// and the most it held at once: its memory beyond the data set.
	snapHeld, snapPeak atomic.Int64
}

// New creates a keyspace with n databases.
func New(n int, hooks Hooks) *Keyspace {
	ks := &Keyspace{seed: maphash.MakeSeed(), hooks: hooks}
	ks.dbs = make([]atomic.Pointer[DB], n)
	for i := range ks.dbs {
		ks.dbs[i].Store(ks.newDB(i))
	}
	return ks
}

func (ks *Keyspace) newDB(id int) *DB {
	db := &DB{ks: ks, id: id}
	db.shards, db.marks = ks.newShards()
	return db
}

func (ks *Keyspace) newShards() (*[Shards]shard, *garbageMarks) {
	shards := new([Shards]shard)
	marks := &garbageMarks{ks: ks, shards: shards}
	for i := range shards {
		shards[i].arena = newArena(i, marks, &ks.acct)
	}
	return shards, marks
}

// DB returns database i.
func (ks *Keyspace) DB(i int) *DB { return ks.dbs[i].Load() }

// Len returns the number of databases.
func (ks *Keyspace) Len() int { return len(ks.dbs) }

// ShardOf returns the shard index of key.
func ShardOf(key []byte) int { return Slot(key) % Shards }

// LockSet is the set of shards one command locks, in ascending order so that
// commands locking several shards never deadlock.
type LockSet struct {
	shards []uint16
	all    bool
	// keys are the added keys' addresses and lengths with their shards, so a
	// lookup of one of them does not hash it again: see ShardOf.
	keys []keyShard
	// Owner identifies who holds the locks, for the hooks. Reset keeps it.
	Owner Owner
}

// Owner is who holds a LockSet's locks (the server's client). The keyspace
// only compares Owners and hands them to the hooks as the author of each
// change; the method marks the types meant to be one, so that no other
// value is taken for an owner by mistake.
type Owner interface{ LockOwner() }

type keyShard struct {
	addr  uintptr
	len   int
	shard int
}

// Reset empties the set for reuse.
func (l *LockSet) Reset() { l.shards, l.keys, l.all = l.shards[:0], l.keys[:0], false }

// Add adds key's shard and remembers it for ShardOf: the caller keeps key
// reachable and its bytes unchanged while the set is in use (a command's
// arguments are), so the same address and length mean the same key.
func (l *LockSet) Add(key []byte) {
	s := ShardOf(key)
	if len(key) > 0 {
		l.keys = append(l.keys, keyShard{uintptr(unsafe.Pointer(&key[0])), len(key), s})
	}
	l.addShard(uint16(s))
}

// AddShardOf adds key's shard without remembering key, for a key the
// caller does not keep.
func (l *LockSet) AddShardOf(key []byte) { l.addShard(uint16(ShardOf(key))) }

func (l *LockSet) addShard(s uint16) {
	for i, x := range l.shards {
		if x == s {
			return
		}
		if x > s {
			l.shards = append(l.shards, 0)
			copy(l.shards[i+1:], l.shards[i:])
			l.shards[i] = s
			return
		}
	}
	l.shards = append(l.shards, s)
}

// ShardOf returns key's shard, without hashing when key is an added key.
// A nil set knows no keys.
func (l *LockSet) ShardOf(key []byte) int {
	if l != nil && len(key) > 0 {
		addr := uintptr(unsafe.Pointer(&key[0]))
		for _, k := range l.keys {
			if k.addr == addr && k.len == len(key) {
				return k.shard
			}
		}
	}
	return ShardOf(key)
}

// All makes the set cover the whole keyspace.
func (l *LockSet) All() { l.all = true }

// Covers reports whether the set locks key.
func (l *LockSet) Covers(key []byte) bool {
	if l.all {
		return true
	}
	s := uint16(ShardOf(key))
	for _, x := range l.shards {
		if x == s {
			return true
		}
	}
	return false
}

// Whole reports whether the set covers the whole keyspace.
func (l *LockSet) Whole() bool { return l.all }

// Lock takes the locks of set in database index and returns the database. It
// is resolved under the lock, so a SWAPDB cannot come in between.
func (ks *Keyspace) Lock(index int, set *LockSet) *DB {
	if set.all {
		ks.all.Lock()
		ks.allOwner, ks.exclusive = set.Owner, true
		return ks.DB(index)
	}
	ks.all.RLock()
	db := ks.DB(index)
	for _, s := range set.shards {
		db.shards[s].mu.Lock()
		db.shards[s].owner = set.Owner
	}
	return db
}

// Reown reports the changes made from now on under set (taken by Lock in
// db) as owner's, until Unlock or the next Reown: a client served under
// another's locks (a blocked pop) makes changes of its own.
func (ks *Keyspace) Reown(db *DB, set *LockSet, owner Owner) {
	if set.all {
		ks.allOwner = owner
		return
	}
	for _, s := range set.shards {
		db.shards[s].owner = owner
	}
}

// Unlock releases what Lock took. Chunks that became mostly garbage during the
// command are compacted first, now that no entry bytes are held.
func (ks *Keyspace) Unlock(db *DB, set *LockSet) {
	if set.all {
		n := len(ks.marked)
		for _, m := range ks.marked[:n] {
			m.evacuate()
		}
		ks.marked = append(ks.marked[:0], ks.marked[n:]...) // noted again
		ks.allOwner, ks.exclusive = nil, false
		ks.all.Unlock()
		return
	}
	for _, s := range set.shards {
		sh := &db.shards[s]
		if sh.arena.garbage {
			sh.evacuate(ks.seed)
		}
		sh.owner = nil
		sh.mu.Unlock()
	}
	ks.all.RUnlock()
}

// SwapDB exchanges the contents of two databases. Needs LockAll.
func (ks *Keyspace) SwapDB(a, b int) {
	if t := ks.reportTo(); t != nil {
		t.SwapDB(a, b)
	}
	da, db := ks.DB(a), ks.DB(b)
	da.id, db.id = b, a
	ks.dbs[a].Store(db)
	ks.dbs[b].Store(da)
}

// MemoryBytes returns the bytes the live entries take in the arenas outside
// the Go heap, large entries' mappings included (see chunkMem): a deleted
// entry stops counting at once, as freed memory does in Redis's used_memory,
// though its bytes are reused or given back only later (holes, compaction).
// The index tables and objects are on the Go heap, which the server counts
// as a whole. It is kept as counters, cheap enough to read before every
// command.
func (ks *Keyspace) MemoryBytes() int64 { return ks.acct.mem.Load() - ks.acct.dead.Load() }

// ArenaBytes returns the bytes the entry arenas hold and, of those, the
// garbage: dead entries not reused or given back yet.
func (ks *Keyspace) ArenaBytes() (held, garbage int64) {
	return ks.acct.mem.Load(), ks.acct.dead.Load()
}

// SnapshotProgress returns the keys the running snapshot saves (0 when
// none runs) and how many of them the saver has written so far.
func (ks *Keyspace) SnapshotProgress() (saved, total int64) {
	return ks.snapSaved.Load(), ks.snapKeys.Load()
}

// SnapshotMemory returns the bytes of early records (keys copied ahead of
// the saver before they changed) the running snapshot holds and the most
// it has held at once: what a fork's copy-on-write costs Redis.
func (ks *Keyspace) SnapshotMemory() (held, peak int64) {
	return ks.snapHeld.Load(), ks.snapPeak.Load()
}

// SetReplica makes expiry a replica's, as in Redis: expired keys are not
// removed (only the master's DELs remove them) and are reported missing,
// except to the commands run under locks owned by master (the master's
// client, nil while there is none), which find them as the master still
// has them.
func (ks *Keyspace) SetReplica(on bool, master Owner) {
	ks.master.Store(&master)
	ks.replica.Store(on)
	if !on {
		ks.own.forgetAll() // a master's active expiry sees them all
	}
}

// ownedByMaster reports whether the lock held on sh (or the exclusive
// lock) is the master's client's.
func (ks *Keyspace) ownedByMaster(sh *shard) bool {
	owner := sh.owner
	if ks.exclusive {
		owner = ks.allOwner
	}
	m := ks.master.Load()
	return owner != nil && m != nil && owner == *m
}

// listpackSet is the header byte of a set stored as a listpack.
const listpackSet = byte(TypeSet)<<4 | byte(EncListpack)

// noteStored records what a stored entry's header byte says the keyspace
// has held (HeldListpackSets).
func (ks *Keyspace) noteStored(meta byte) {
	if meta == listpackSet && !ks.listpackSets.Load() {
		ks.listpackSets.Store(true)
	}
}

// HeldListpackSets reports whether a set has been stored as a listpack
// since the keyspace was made: a file of it may hold Redis 7.2's listpack
// set type, which RDB version 10 lacks. Kept rather than counted, it costs
// the stores one comparison.
func (ks *Keyspace) HeldListpackSets() bool { return ks.listpackSets.Load() }
