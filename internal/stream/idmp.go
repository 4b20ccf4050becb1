package stream

import (
	"hash/fnv"
	"slices"
)

// Idempotent production (Redis 8.6, XADD IDMP/IDMPAUTO and XCFGSET): per
// producer, the idempotent IDs (iids) recently added and the entry each
// added, kept for a duration and up to a number per producer, oldest
// evicted first.

// Defaults and bounds of XCFGSET's IDMP-DURATION (seconds) and
// IDMP-MAXSIZE (iids per producer), from its page.
const (
	IDMPDefaultDuration = 100
	IDMPDefaultMaxSize  = 100
	IDMPMaxDuration     = 86400
	IDMPMaxMaxSize      = 10000
)

// idmp is a stream's idempotency state; a stream that never used it has
// none (nil), which reads as the defaults.
type idmp struct {
	duration, maxSize int64
	producers         map[string]*producer
	tracked           int    // iids held across producers
	added, duplicates uint64 // iids ever recorded; XADDs answered from the map
}

// producer holds one producer's iids in the order they were added (times
// ascending, so expiry and eviction both take from the front).
type producer struct {
	queue []idmpRecord
	ids   map[string]ID
}

type idmpRecord struct {
	iid string
	id  ID
	at  int64 // when recorded, Unix ms
}

// IDMPState is what XINFO STREAM reports of it.
type IDMPState struct {
	Duration, MaxSize  int64
	Producers, Tracked int
	Added, Duplicates  uint64
}

func (s *Stream) idmpState() *idmp {
	if s.idmp == nil {
		s.idmp = &idmp{duration: IDMPDefaultDuration, maxSize: IDMPDefaultMaxSize, producers: map[string]*producer{}}
	}
	return s.idmp
}

// expire drops p's iids recorded a duration or more before now.
func (m *idmp) expire(pid string, p *producer, now int64) {
	n := 0
	for n < len(p.queue) && p.queue[n].at+m.duration*1000 <= now {
		n++
	}
	m.drop(pid, p, n)
}

// drop removes p's n oldest iids (and p when none are left).
func (m *idmp) drop(pid string, p *producer, n int) {
	if n == 0 {
		return
	}
	for _, r := range p.queue[:n] {
		delete(p.ids, r.iid)
	}
	p.queue = slices.Delete(p.queue, 0, n)
	m.tracked -= n
	if len(p.queue) == 0 {
		delete(m.producers, pid)
	}
}

// IDMPLookup returns the entry ID recorded for (pid, iid), counting the
// duplicate it answers.
func (s *Stream) IDMPLookup(pid, iid []byte, now int64) (ID, bool) {
	if s.idmp == nil {
		return ID{}, false
	}
	m := s.idmp
	p := m.producers[string(pid)]
	if p == nil {
		return ID{}, false
	}
	m.expire(string(pid), p, now)
	id, ok := p.ids[string(iid)]
	if ok {
		m.duplicates++
	}
	return id, ok
}

// IDMPFind returns the entry ID recorded for (pid, iid), counting nothing.
func (s *Stream) IDMPFind(pid, iid []byte) (ID, bool) {
	if s.idmp == nil {
		return ID{}, false
	}
	if p := s.idmp.producers[string(pid)]; p != nil {
		id, ok := p.ids[string(iid)]
		return id, ok
	}
	return ID{}, false
}

// IDMPRecord records that (pid, iid) added the entry id at now, evicting
// the producer's oldest iids past the maximum size; counted says whether
// iids-added counts it (an XADD; not a replayed XIDMPRECORD).
func (s *Stream) IDMPRecord(pid, iid []byte, id ID, now int64, counted bool) {
	m := s.idmpState()
	p := m.producers[string(pid)]
	if p == nil {
		p = &producer{ids: map[string]ID{}}
		m.producers[string(pid)] = p
	}
	r := idmpRecord{iid: string(iid), id: id, at: now}
	p.queue = append(p.queue, r)
	p.ids[r.iid] = id
	m.tracked++
	if counted {
		m.added++
	}
	m.drop(string(pid), p, max(0, len(p.queue)-int(m.maxSize)))
}

// IDMPConfigure sets the duration (seconds) and maximum size, a value 0
// keeping the current one, and clears every producer's iids (as XCFGSET
// does).
func (s *Stream) IDMPConfigure(duration, maxSize int64) {
	m := s.idmpState()
	if duration > 0 {
		m.duration = duration
	}
	if maxSize > 0 {
		m.maxSize = maxSize
	}
	clear(m.producers)
	m.tracked = 0
}

// IDMPInfo returns the state, expiring what is due at now first.
func (s *Stream) IDMPInfo(now int64) IDMPState {
	if s.idmp == nil {
		return IDMPState{Duration: IDMPDefaultDuration, MaxSize: IDMPDefaultMaxSize}
	}
	m := s.idmp
	for pid, p := range m.producers {
		m.expire(pid, p, now)
	}
	return IDMPState{Duration: m.duration, MaxSize: m.maxSize, Producers: len(m.producers),
		Tracked: m.tracked, Added: m.added, Duplicates: m.duplicates}
}

// HasIDMP says whether the stream's idempotency state differs from a
// stream's that never used it.
func (s *Stream) HasIDMP() bool { return s.idmp != nil }

// IDMPSettings returns the configuration and counters as saved.
func (s *Stream) IDMPSettings() (duration, maxSize int64, added, duplicates uint64) {
	if s.idmp == nil {
		return IDMPDefaultDuration, IDMPDefaultMaxSize, 0, 0
	}
	return s.idmp.duration, s.idmp.maxSize, s.idmp.added, s.idmp.duplicates
}

// LoadIDMP restores the configuration and counters saved with
// IDMPSettings.
func (s *Stream) LoadIDMP(duration, maxSize int64, added, duplicates uint64) {
	m := s.idmpState()
	m.duration, m.maxSize, m.added, m.duplicates = duration, maxSize, added, duplicates
}

// EachIDMP calls fn for every tracked iid: producers in pid order, each
// producer's iids oldest first.
func (s *Stream) EachIDMP(fn func(pid, iid []byte, id ID, at int64)) {
	if s.idmp == nil {
		return
	}
	pids := make([]string, 0, len(s.idmp.producers))
	for pid := range s.idmp.producers {
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	for _, pid := range pids {
		for _, r := range s.idmp.producers[pid].queue {
			fn([]byte(pid), []byte(r.iid), r.id, r.at)
		}
	}
}

func (m *idmp) clone() *idmp {
	c := *m
	c.producers = make(map[string]*producer, len(m.producers))
	for pid, p := range m.producers {
		np := &producer{queue: slices.Clone(p.queue), ids: make(map[string]ID, len(p.ids))}
		for k, v := range p.ids {
			np.ids[k] = v
		}
		c.producers[pid] = np
	}
	return &c
}

func (m *idmp) memoryBytes() int {
	n := 96
	for pid, p := range m.producers {
		n += 64 + len(pid) + cap(p.queue)*48
		for _, r := range p.queue {
			n += 2*len(r.iid) + 48
		}
	}
	return n
}

// AutoIID is IDMPAUTO's idempotent ID for an entry's field/value pairs:
// Keyhive's own, a 128-bit FNV-1a hash of each pair (field and value
// length-prefixed) XORed together, so the pairs' order does not matter.
func AutoIID(pairs [][]byte) [16]byte {
	var iid [16]byte
	h := fnv.New128a()
	var lenBuf [8]byte
	var sum [16]byte
	for i := 0; i+1 < len(pairs); i += 2 {
		h.Reset()
		for _, b := range pairs[i : i+2] {
			n := len(b)
			for j := range lenBuf {
				lenBuf[j] = byte(n >> (8 * j))
			}
			h.Write(lenBuf[:])
			h.Write(b)
		}
		h.Sum(sum[:0])
		for j := range iid {
			iid[j] ^= sum[j]
		}
	}
	return iid
}
