package server

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
)

// HOTKEYS (Redis 8.6, https://redis.io/docs/latest/commands/hotkeys/): a
// tracking session, started and stopped by a client, that charges every
// top-level command's CPU time and network bytes (its request and reply) to
// its keys, shared equally, and keeps the heaviest keys per metric in a
// top-K sketch. One session per server; commands inside MULTI and scripts
// are not tracked (they are nested calls), as in Redis.

func init() {
	bindSub("hotkeys", "start", hotkeysStartCommand)
	bindSub("hotkeys", "stop", hotkeysStopCommand)
	bindSub("hotkeys", "get", hotkeysGetCommand)
	bindSub("hotkeys", "reset", hotkeysResetCommand)
	bindSub("hotkeys", "help", hotkeysHelpCommand)
}

// hotkeys is the server's tracking state.
type hotkeys struct {
	active  atomic.Bool // a session is collecting: the one check per command
	mu      sync.Mutex
	session *hotkeySession // the current or last session; nil before START or after RESET
	// updateNs is the time spent updating the sketches (INFO's cpu_time).
	updateNs int64
}

// writeHotkeysInfo writes INFO's hotkeys section (Redis 8.6,
// https://redis.io/docs/latest/commands/info/): whether a session is
// active, its sketches' memory, the time spent updating them.
func (s *Server) writeHotkeysInfo(b *strings.Builder) {
	h := &s.hotkeys
	h.mu.Lock()
	defer h.mu.Unlock()
	active, mem := 0, 0
	if t := h.session; t != nil {
		active = boolInt(t.active)
		for _, k := range []*topK{t.cpu, t.net} {
			if k != nil {
				mem += k.memory()
			}
		}
	}
	field(b, "tracking_active", active)
	field(b, "used_memory", mem)
	field(b, "cpu_time", h.updateNs/int64(time.Millisecond))
}

// hotkeySession is one tracking session, under hotkeys.mu.
type hotkeySession struct {
	cpu, net    *topK // nil for a metric not tracked
	k           int
	sampleRatio int
	startMs     int64
	durationMs  int64 // DURATION's limit while active (0: none); the length once stopped
	active      bool
	rusage      syscallRusage // the process's CPU times at START
	allUs       uint64        // CPU time of every tracked command, in µs
	allNet      uint64        // network bytes of every tracked command
}

// hotkeyRecord charges a command that ran for elapsedNs, with request args
// and replyBytes of reply, to its keys. It is called for top-level commands
// only, while a session is active.
func (s *Server) hotkeyRecord(keys, args [][]byte, elapsedNs int64, replyBytes int, nowMs int64) {
	if len(keys) == 0 {
		return
	}
	h := &s.hotkeys
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.session
	if t == nil || !t.active || h.expired(t, nowMs) {
		return
	}
	began := monoNow()
	defer func() { h.updateNs += monoNow() - began }()
	us := uint64(max(elapsedNs, 0) / 1000)
	bytes := uint64(requestBytes(args) + replyBytes)
	t.allUs += us
	t.allNet += bytes
	if t.sampleRatio > 1 && rand.IntN(t.sampleRatio) != 0 {
		return
	}
	n := uint64(len(keys))
	for _, k := range keys {
		if t.cpu != nil {
			t.cpu.add(k, us/n)
		}
		if t.net != nil {
			t.net.add(k, bytes/n)
		}
	}
}

// expired ends an active session whose DURATION has passed (it lasted
// exactly that), reporting whether it did.
func (h *hotkeys) expired(t *hotkeySession, nowMs int64) bool {
	if t.active && t.durationMs > 0 && nowMs-t.startMs >= t.durationMs {
		t.active = false
		h.active.Store(false)
		return true
	}
	return false
}

// tracking reports whether a session is running at nowMs (one whose
// DURATION passed is ended first).
func (h *hotkeys) tracking(nowMs int64) bool {
	t := h.session
	return t != nil && t.active && !h.expired(t, nowMs)
}

// stop ends an active session, which keeps its data.
func (h *hotkeys) stop(t *hotkeySession, nowMs int64) {
	t.active = false
	t.durationMs = nowMs - t.startMs
	h.active.Store(false)
}

// requestBytes is the size of args as a RESP multibulk request.
func requestBytes(args [][]byte) int {
	n := 1 + decimalDigits(len(args)) + 2
	for _, a := range args {
		n += 1 + decimalDigits(len(a)) + 2 + len(a) + 2
	}
	return n
}

// decimalDigits is the length of n >= 0 written in decimal, without
// formatting it (strconv.Itoa allocates from 100 on).
func decimalDigits(n int) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

const (
	hotkeysMaxK       = 64
	hotkeysMaxSeconds = 1000000
)

// hotkeysStartCommand is HOTKEYS START METRICS count [CPU] [NET] [COUNT k]
// [DURATION seconds] [SAMPLE ratio] [SLOTS count slot ...], with the checks
// and error texts of Redis's hotkeysCommand.
func hotkeysStartCommand(x *Ctx) {
	h := &x.s.hotkeys
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.tracking(x.Now) {
		x.W.Error("ERR hotkey tracking session already in progress")
		return
	}
	args := x.Args
	if len(args) < 4 || !cstr.ArgIs(args[2], "metrics") {
		x.W.Error("ERR METRICS parameter is required")
		return
	}
	metrics, ok := strnum.ParseInt(args[3])
	if !ok || metrics < 1 || metrics > 2 {
		x.W.Error("ERR METRICS count must be > 0 and <= 2")
		return
	}
	var cpu, net bool
	j := 4
	for parsed := int64(0); j < len(args) && parsed < metrics; parsed, j = parsed+1, j+1 {
		switch {
		case cstr.ArgIs(args[j], "cpu") && cpu:
			x.W.Error("ERR METRICS CPU defined more than once!")
			return
		case cstr.ArgIs(args[j], "cpu"):
			cpu = true
		case cstr.ArgIs(args[j], "net") && net:
			x.W.Error("ERR METRICS NET defined more than once!")
			return
		case cstr.ArgIs(args[j], "net"):
			net = true
		}
	}
	if int64(j-4) != metrics {
		x.W.Error("ERR METRICS count does not match number of metric types provided")
		return
	}
	if !cpu && !net {
		x.W.Error("ERR METRICS no valid metrics passed. Supported: CPU|NET")
		return
	}
	k, seconds, ratio := int64(10), int64(0), int64(1)
	for ; j < len(args); j += 2 {
		more := j+1 < len(args)
		var n int64
		if more {
			n, ok = strnum.ParseInt(args[j+1])
		}
		switch {
		case more && cstr.ArgIs(args[j], "count"):
			if !ok || n < 1 || n > hotkeysMaxK {
				x.W.Error("ERR COUNT must be between 1 and 64")
				return
			}
			k = n
		case more && cstr.ArgIs(args[j], "duration"):
			if !ok || n < 1 || n > hotkeysMaxSeconds {
				x.W.Error("ERR DURATION must be between 1 and 1000000")
				return
			}
			seconds = n
		case more && cstr.ArgIs(args[j], "sample"):
			if !ok || n < 1 || n > 1<<31-1 {
				x.W.Error("ERR SAMPLE ratio must be positive")
				return
			}
			ratio = n
		case more && cstr.ArgIs(args[j], "slots") && x.s.cluster == nil:
			x.W.Error("ERR SLOTS parameter cannot be used in non-cluster mode")
			return
		case more && cstr.ArgIs(args[j], "slots"):
			// A cluster node tracks every slot it serves (docs/differences.md).
			x.W.Error("ERR SLOTS parameter is not supported by this server")
			return
		default:
			x.W.Error(errSyntax)
			return
		}
	}
	t := &hotkeySession{k: int(k), sampleRatio: int(ratio), startMs: x.Now, durationMs: seconds * 1000, active: true}
	// As Redis: the sketch keeps ten times the keys asked for, for accuracy.
	if cpu {
		t.cpu = newTopK(int(k) * 10)
	}
	if net {
		t.net = newTopK(int(k) * 10)
	}
	selfRusage(&t.rusage)
	h.session, h.updateNs = t, 0
	h.active.Store(true)
	x.W.OK()
}

// hotkeysStopCommand is HOTKEYS STOP: the session ends and keeps its data;
// without an active one, a null (as Redis's code does).
func hotkeysStopCommand(x *Ctx) {
	h := &x.s.hotkeys
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.tracking(x.Now) {
		x.W.Null()
		return
	}
	h.stop(h.session, x.Now)
	x.W.OK()
}

// hotkeysResetCommand is HOTKEYS RESET: a stopped session's data goes.
func hotkeysResetCommand(x *Ctx) {
	h := &x.s.hotkeys
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.tracking(x.Now) {
		x.W.Error("ERR hotkey tracking session in progress, stop tracking first")
		return
	}
	h.session, h.updateNs = nil, 0
	h.active.Store(false)
	x.W.OK()
}

// hotkeysGetCommand is HOTKEYS GET: the session's figures and its top keys
// per metric, as https://redis.io/docs/latest/commands/hotkeys-get/ lists
// them (the cluster-only fields left out): one array of field-value pairs
// (RESP3: a map) inside an array; null with no session.
func hotkeysGetCommand(x *Ctx) {
	h := &x.s.hotkeys
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.session
	if t == nil {
		x.W.Null()
		return
	}
	h.expired(t, x.Now)
	duration := t.durationMs
	if t.active {
		duration = x.Now - t.startMs
	}
	fields := 7
	if t.cpu != nil {
		fields += 3
	}
	if t.net != nil {
		fields += 2
	}
	x.W.Array(1)
	x.W.Map(fields)
	x.W.BulkString("tracking-active")
	x.W.Int(int64(boolInt(t.active)))
	x.W.BulkString("sample-ratio")
	x.W.Int(int64(t.sampleRatio))
	x.W.BulkString("selected-slots") // every slot: one range
	x.W.Array(1)
	x.W.Array(2)
	x.W.Int(0)
	x.W.Int(16383)
	x.W.BulkString("all-commands-all-slots-us")
	x.W.Int(int64(t.allUs))
	x.W.BulkString("net-bytes-all-commands-all-slots")
	x.W.Int(int64(t.allNet))
	x.W.BulkString("collection-start-time-unix-ms")
	x.W.Int(t.startMs)
	x.W.BulkString("collection-duration-ms")
	x.W.Int(duration)
	if t.cpu != nil {
		var now syscallRusage
		selfRusage(&now)
		x.W.BulkString("total-cpu-time-user-ms")
		x.W.Int(int64((now.user - t.rusage.user) * 1000))
		x.W.BulkString("total-cpu-time-sys-ms")
		x.W.Int(int64((now.sys - t.rusage.sys) * 1000))
	}
	if t.net != nil {
		x.W.BulkString("total-net-bytes")
		x.W.Int(int64(t.net.total))
	}
	if t.cpu != nil {
		x.W.BulkString("by-cpu-time-us")
		t.cpu.write(x, t.k)
	}
	if t.net != nil {
		x.W.BulkString("by-net-bytes")
		t.net.write(x, t.k)
	}
}

func hotkeysHelpCommand(x *Ctx) {
	writeHelp(x, "HOTKEYS", []string{
		"START METRICS <count> [CPU] [NET] [COUNT <k>] [DURATION <seconds>] [SAMPLE <ratio>]",
		"    Start tracking the keys that cost the most CPU time or network bytes,",
		"    keeping the top <k> (default 10) of each metric.",
		"STOP", "    Stop tracking, keeping the results.",
		"GET", "    Return the results of the current or last tracking.",
		"RESET", "    Release a stopped tracking's results.",
	})
}

// topK is a Space-Saving sketch: at most capacity keys with a count each;
// a key not held replaces the smallest, inheriting its count (so counts may
// overestimate by at most that), which keeps the heavy keys held.
type topK struct {
	capacity int
	index    map[string]int // key -> position in items
	items    []topItem      // a min-heap by count
	total    uint64         // the sum of every amount added
}

type topItem struct {
	key   string
	count uint64
}

func newTopK(capacity int) *topK {
	return &topK{capacity: capacity, index: make(map[string]int, capacity)}
}

func (t *topK) add(key []byte, amount uint64) {
	t.total += amount
	if i, ok := t.index[string(key)]; ok {
		t.items[i].count += amount
		t.down(i)
		return
	}
	if len(t.items) < t.capacity {
		t.items = append(t.items, topItem{string(key), amount})
		t.index[string(key)] = len(t.items) - 1
		t.up(len(t.items) - 1)
		return
	}
	delete(t.index, t.items[0].key)
	t.items[0] = topItem{string(key), t.items[0].count + amount}
	t.index[t.items[0].key] = 0
	t.down(0)
}

// memory estimates the sketch's bytes: its items, their keys, the index.
func (t *topK) memory() int {
	n := cap(t.items) * 24
	for _, it := range t.items {
		n += 2*len(it.key) + 48 // the key in the item and the index, a map slot
	}
	return n
}

func (t *topK) swap(i, j int) {
	t.items[i], t.items[j] = t.items[j], t.items[i]
	t.index[t.items[i].key], t.index[t.items[j].key] = i, j
}

func (t *topK) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if t.items[parent].count <= t.items[i].count {
			return
		}
		t.swap(i, parent)
		i = parent
	}
}

func (t *topK) down(i int) {
	for {
		least := i
		for _, c := range []int{2*i + 1, 2*i + 2} {
			if c < len(t.items) && t.items[c].count < t.items[least].count {
				least = c
			}
		}
		if least == i {
			return
		}
		t.swap(i, least)
		i = least
	}
}

// write replies with the k heaviest keys and their counts, heaviest first,
// as a flat array of key-count pairs.
func (t *topK) write(x *Ctx, k int) {
	top := slices.Clone(t.items)
	slices.SortFunc(top, func(a, b topItem) int {
		if c := cmp.Compare(b.count, a.count); c != 0 {
			return c
		}
		return strings.Compare(a.key, b.key)
	})
	n := 0
	for n < min(k, len(top)) && top[n].count > 0 {
		n++
	}
	x.W.Array(2 * n)
	for _, it := range top[:n] {
		x.W.BulkString(it.key)
		x.W.Int(int64(it.count))
	}
}
