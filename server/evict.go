package server

import (
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/keyhive/keyhive/cmdspec"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/namespace"
)

// Memory accounting and eviction, as Redis's performEvictions: before a
// command runs, while used memory is above maxmemory, keys chosen by
// maxmemory-policy are removed; when none can be, denyoom commands are
// refused.
//
// used memory (usedMemory, INFO's used_memory) = the keyspace's off-heap
// entry arenas, large values included (a counter kept as entries are
// written) + client read buffers mapped for big arguments + what the Go
// runtime holds from the OS (heap, including the index tables, the other
// client buffers, stacks, runtime metadata) beyond what it held at start,
// read from runtime/metrics at most once a millisecond + Redis's startup
// footprint (1 MB) in place of Keyhive's (the Go runtime and the empty
// shards of every database, about 9 MB), so that the same maxmemory holds
// as many keys as in Redis; RSS may exceed maxmemory by the difference
// (README, Memory limits and eviction).

const errOOM = "OOM command not allowed when used memory > 'maxmemory'."

type evictResult uint8

const (
	evictOK      evictResult = iota
	evictRunning             // over the limit, a background job goes on evicting
	evictFail                // over the limit and nothing left to evict
)

type evictState struct {
	limit    atomic.Int64 // maxmemory, 0 for none: the one check per command
	policy   atomic.Uint32
	volatile atomic.Bool
	evicted  atomic.Int64 // INFO stats evicted_keys

	runtimeMem   atomic.Int64 // Go runtime memory at the last reading
	runtimeMemAt atomic.Int64 // monotonic ns of that reading
	readMu       sync.Mutex
	samples      [2]metrics.Sample

	mu         sync.Mutex // one evicting goroutine at a time
	ev         keyspace.Evictor
	onEvict    func(db int, key []byte)
	by         *Client // whose command the evictions run before, under mu
	victim     []byte  // a namespace quota's victim, under mu
	background atomic.Bool

	// lrm is Redis 8.6's least-recently-modified eviction: the keys' access
	// clocks are the LRU clock of their last write, reads leave them alone.
	lrm atomic.Bool
}

// watchMaxMemory keeps the eviction settings in step with the configuration.
func (s *Server) watchMaxMemory() {
	e := &s.evict
	e.samples[0].Name = "/memory/classes/total:bytes"
	e.samples[1].Name = "/memory/classes/heap/released:bytes"
	e.onEvict = s.keyEvicted
	sync := func() {
		e.limit.Store(s.cfg.MaxMemory())
		p, scope, _ := strings.Cut(s.cfg.MaxMemoryPolicy(), "-")
		if scope == "" {
			p, scope = scope, p
		}
		e.volatile.Store(p == "volatile")
		e.lrm.Store(scope == "lrm")
		e.policy.Store(uint32(map[string]keyspace.EvictPolicy{
			"lru": keyspace.EvictLRU, "lfu": keyspace.EvictLFU, "random": keyspace.EvictRandom, "ttl": keyspace.EvictTTL,
			"lrm":  keyspace.EvictLRU, // by the write-only clocks
			"lrfu": keyspace.EvictLRFU,
		}[scope]))
	}
	sync()
	s.cfg.OnChange("maxmemory", sync)
	s.cfg.OnChange("maxmemory-policy", sync)
	// A lower maxmemory evicts at once, as Redis starts its eviction
	// timer in the config apply: CONFIG SET holds the shared lock, so a
	// goroutine of its own does it.
	s.cfg.OnChange("maxmemory", s.startEvicting)
}

// startEvicting evicts in the background while used memory is over
// maxmemory.
func (s *Server) startEvicting() {
	e := &s.evict
	if e.limit.Load() == 0 || s.memoryOver(monoNow(), 0) <= 0 || !e.background.CompareAndSwap(false, true) {
		return
	}
	s.wg.Add(1)
	go s.evictInBackground()
}

// readRuntimeMem refreshes the Go runtime's share of used memory.
func (s *Server) readRuntimeMem(mono int64) {
	e := &s.evict
	if !e.readMu.TryLock() {
		return // another goroutine is reading it right now
	}
	metrics.Read(e.samples[:])
	e.runtimeMem.Store(int64(e.samples[0].Value.Uint64() - e.samples[1].Value.Uint64()))
	e.runtimeMemAt.Store(mono)
	e.readMu.Unlock()
}

// usedMemory is used_memory, the one figure INFO, MEMORY STATS, an RDB's
// used-mem and eviction use, from a runtime reading at most maxAge old: the
// off-heap key arenas and the client read buffers mapped for big arguments
// (both fall as soon as data is deleted), plus what the Go runtime holds
// beyond its footprint at start, plus Redis's startup footprint in place of
// Keyhive's, so that the same maxmemory holds as many keys as in Redis.
func (s *Server) usedMemory(mono int64, maxAge time.Duration) int64 {
	if mono-s.evict.runtimeMemAt.Load() >= int64(maxAge) {
		s.readRuntimeMem(mono)
	}
	growth := s.evict.runtimeMem.Load() - s.startupRuntime
	return s.ks.MemoryBytes() + s.mappedBufs.Load() + max(growth, 0) + redisStartupMemory
}

// redisStartupMemory stands for Keyhive's startup footprint in used memory:
// Redis 7.0's used_memory_startup, about 1 MB.
const redisStartupMemory = 1 << 20

// memoryOver reports how far used memory is above maxmemory.
func (s *Server) memoryOver(mono int64, maxAge time.Duration) int64 {
	return s.usedMemory(mono, maxAge) - s.evict.limit.Load()
}

// outOfMemory runs evictions before cmd (execute calls it when maxmemory is
// set) and reports whether cmd must be refused, as Redis 7.2+'s
// processCommand decides when nothing could be evicted: denyoom commands
// (scripts and functions by their declared flags), and EXEC of a
// transaction holding one. Inside MULTI other commands are queued (Redis
// 7.0 refused them all).
func (c *Client) outOfMemory(cmd *Command, args [][]byte, mono, now int64) bool {
	c.overMaxMemory = c.s.performEvictions(c, mono, now) == evictFail
	if !c.overMaxMemory {
		return false
	}
	if cmd.Flags&cmdspec.FlagDenyOOM != 0 || c.s.scriptDeniesOOM(cmd, args) {
		return true
	}
	if cmd == cmdExec && c.multi != nil {
		for _, q := range c.multi.cmds {
			if q.cmd.Flags&cmdspec.FlagDenyOOM != 0 || c.s.scriptDeniesOOM(q.cmd, q.args) {
				return true
			}
		}
	}
	return false
}

// performEvictions evicts keys until used memory is within maxmemory, for at
// most the time maxmemory-eviction-tenacity allows; a background job then
// goes on, as Redis's eviction timer proc does. by is the client whose
// command is about to run.
func (s *Server) performEvictions(by *Client, mono, now int64) evictResult {
	if s.memoryOver(mono, time.Millisecond) <= 0 {
		s.overMaxmemory.note(evictOK)
		return evictOK
	}
	e := &s.evict
	e.mu.Lock()
	e.by = by
	res := s.evictSome(mono, now)
	e.by = nil
	e.mu.Unlock()
	s.overMaxmemory.note(res)
	if res == evictRunning && e.background.CompareAndSwap(false, true) {
		s.wg.Add(1)
		go s.evictInBackground()
	}
	if res == evictOK && e.background.Load() {
		return evictRunning
	}
	return res
}

// evictSome evicts while memory is over the limit and the time limit allows,
// under evict.mu. It reports evictRunning when time ran out first.
func (s *Server) evictSome(mono, now int64) evictResult {
	e := &s.evict
	toFree := s.memoryOver(mono, time.Millisecond) // another goroutine may have evicted meanwhile
	// A CLIENT PAUSE keeps the data set still, as Redis does, and a replica
	// ignoring maxmemory stays its master's exact copy.
	if toFree <= 0 || s.paused() || s.IsReplica() && s.cfg.ReplicaIgnoreMaxMemory() {
		return evictOK
	}
	policy := keyspace.EvictPolicy(e.policy.Load())
	if policy == keyspace.EvictNone {
		return evictFail
	}
	samples, decay := max(s.cfg.MaxMemorySamples(), 1), s.cfg.LFUDecayTime()
	limit := evictionTimeLimit(s.cfg.MaxMemoryEvictionTenacity())
	start := monoNow()
	monitored := s.cfg.LatencyMonitorThreshold() > 0
	if monitored {
		defer func() { s.noteLatency(eventEvictionCycle, (monoNow()-start)/int64(time.Millisecond)) }()
	}
	for freed, n := int64(0), 0; freed < toFree; n++ {
		var began int64
		if monitored {
			began = monoNow()
		}
		f, ok := s.evictOverQuota()
		if !ok {
			f, ok = s.ks.EvictOne(&e.ev, policy, e.volatile.Load(), samples, now, decay, e.onEvict)
		}
		if !ok {
			return evictFail
		}
		if monitored {
			s.noteLatency(eventEvictionDel, (monoNow()-began)/int64(time.Millisecond))
		}
		freed += f
		e.evicted.Add(1)
		if n%16 == 15 && monoNow()-start > limit {
			return evictRunning
		}
	}
	return evictOK
}

// evictionTimeLimit is how long one call may evict, in ns, as Redis derives
// it from maxmemory-eviction-tenacity: 50 us per step up to 10, then 15% more
// per step, and no limit at 100.
func evictionTimeLimit(tenacity int) int64 {
	if tenacity >= 100 {
		return 1<<63 - 1
	}
	us := 50.0 * float64(min(tenacity, 10))
	for range max(tenacity-10, 0) {
		us *= 1.15
	}
	return int64(us * 1000)
}

// evictInBackground goes on evicting, slice by slice, until memory is within
// the limit, nothing is left to evict, or the server closes.
func (s *Server) evictInBackground() {
	defer s.wg.Done()
	e := &s.evict
	defer e.background.Store(false)
	for {
		select {
		case <-s.done:
			return
		default:
		}
		e.mu.Lock()
		res := s.evictSome(monoNow(), s.clock.UnixMilli())
		e.mu.Unlock()
		s.overMaxmemory.note(res)
		if res != evictRunning {
			return
		}
		runtime.Gosched() // let commands in between slices
	}
}

// keyEvicted runs for each evicted key, just deleted: the "evicted" event,
// then the deletion's propagation as Redis does it: DEL, or UNLINK under
// lazyfree-lazy-eviction.
func (s *Server) keyEvicted(db int, key []byte) {
	if t := s.schema.Load(); t != nil {
		t.Count(db, key, namespace.Evicted)
	}
	s.notifyIn(s.evict.by, notifyEvicted, "evicted", key, db)
	if !s.stream.Active() {
		return
	}
	verb := argDEL
	if s.cfg.LazyFreeLazyEviction() {
		verb = argUNLINK
	}
	s.stream.Publish(db, [][]byte{verb, key})
}

// watchAccessPolicy keeps the keyspace's access clocks (LRU, LFU or LRFU) in step
// with maxmemory-policy, lfu-log-factor and lfu-decay-time. The server calls it
// once, after creating the keyspace.
func (s *Server) watchAccessPolicy() {
	sync := func() {
		p := s.cfg.MaxMemoryPolicy()
		s.ks.SetLFU(strings.HasSuffix(p, "-lfu"), s.cfg.LFULogFactor(), s.cfg.LFUDecayTime())
		s.ks.SetLRFU(strings.HasSuffix(p, "-lrfu"))
	}
	sync()
	for _, name := range []string{"maxmemory-policy", "lfu-log-factor", "lfu-decay-time"} {
		s.cfg.OnChange(name, sync)
	}
}

// SharedIntegerPolicy is the maxmemory policy as far as shared integers go:
// Redis shares them unless maxmemory is set with an LRU or LFU policy.
func (s *Server) SharedIntegerPolicy() string {
	if s.cfg.MaxMemory() == 0 {
		return ""
	}
	return s.cfg.MaxMemoryPolicy()
}
