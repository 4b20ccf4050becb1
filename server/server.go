package server

import (
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/keyhive/keyhive/acl"
	"github.com/keyhive/keyhive/changes"
	"github.com/keyhive/keyhive/clock"
	"github.com/keyhive/keyhive/cluster"
	"github.com/keyhive/keyhive/cluster/slotstats"
	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/discover"
	"github.com/keyhive/keyhive/durability"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/namespace"
	"github.com/keyhive/keyhive/replication"
	"github.com/keyhive/keyhive/scripting"
	"github.com/keyhive/keyhive/values"
)

// Server is one Keyhive instance.
type Server struct {
	cfg   *config.Config
	clock clock.Clock
	ks    *keyspace.Keyspace
	log   *log.Logger

	// schema is the declared namespaces (nil: none), which the keyspace
	// reports its keys' changes to (setSchema sets both).
	schema atomic.Pointer[namespace.Table]
	// discovery is the discovered prefixes' sketch the next Table gets
	// (nil: off); changed under the exclusive lock, one change at a time.
	discovery   *discover.Sketch
	discoveryMu sync.Mutex

	fieldScratch values.Scratch // the active cycle's, for hashes' expired fields
	// expiredFields are the fields the active cycle expired in one hash,
	// for subkey notifications.
	expiredFields command.Subkeys

	mu        sync.Mutex
	listeners []net.Listener
	plainTCP  []net.Listener // the TCP listeners without TLS: CONFIG SET port moves them
	loops     []*eventLoop   // serve the plain TCP and unix-socket clients (eventloop_linux.go)
	loopTurn  atomic.Uint64
	clients   map[uint64]*Client
	slowlog   slowLog
	closed    bool
	wg        sync.WaitGroup
	done      chan struct{}
	stopped   chan struct{} // closed when Close has finished

	nextClientID atomic.Uint64
	started      time.Time
	runID        string
	stats        stats
	cmdStats     []commandStats // indexed by Command.id
	// closedTraffic holds the counters of disconnected clients and
	// trafficBase the totals at the last RESETSTAT (all four under mu).
	closedTraffic, trafficBase trafficTotals
	closedIO, ioBase           []trafficTotals // the same per I/O thread (INFO threads)
	stream                     changes.Stream  // every change to the data set, to the AOF, replicas and OnPropagate
	pause                      pauseState      // CLIENT PAUSE (pause.go)
	blocking                   blocking
	aofWaiters                 aofWaiters  // WAITAOF (wait.go)
	replWaiters                replWaiters // WAIT (wait.go)
	watches                    watches
	tracking                   tracking
	pubsub                     pubsubRegistry
	monitors                   monitors
	latency                    latencyMonitor
	expiry                     expiryStats
	rates                      instantaneous
	overMaxmemory              overLimitTime
	forks                      forkStats
	scriptState
	acl   *acl.Users
	aof   *durability.AOF
	saver *durability.Saver
	// barrier is what replies pass before they leave (the AOF's).
	barrier func() (fed int64, durable bool)
	// repl is replication (package replication; glue in replication*.go).
	repl *replication.Manager
	// snapshotInstant is held by a replica around applying a command of
	// its master's and forwarding its bytes, and by a snapshot's instant.
	snapshotInstant sync.Mutex
	// shutdown is the shutdown under way (nil: none), which the SHUTDOWNs
	// and signals that come meanwhile join.
	shutdown atomic.Pointer[shutdownRun]
	// loadExpired are the keys the start-up load skipped as expired.
	loadExpired loadExpired
	// notify-keyspace-events, as one word every write can read cheaply
	notifyFlags atomic.Uint32
	// activeExpireEnabled is DEBUG SET-ACTIVE-EXPIRE.
	activeExpireEnabled atomic.Bool
	debug               debugState // what DEBUG switches (cmd_debug.go)
	peakMemory          atomic.Int64
	evict               evictState
	hotkeys             hotkeys            // HOTKEYS' tracking session (hotkeys.go)
	slotStats           slotstats.Counters // CLUSTER SLOT-STATS' counters (slotstats.go)
	compat              clusterCompat      // cluster_incompatible_ops (clustercompat.go)
	memRelease          memRelease
	startupMemory       int64        // used memory when Start began (INFO used_memory_startup)
	startupRuntime      int64        // the Go runtime's memory then, which used memory leaves out (evict.go)
	mappedBufs          atomic.Int64 // bytes of client buffers mapped outside the Go heap (client.go)
	wallClock           bool         // clock is the real one: commands reuse their start time
	supervised          string       // INFO's process_supervised (WithSupervised)

	// metrics is the Prometheus endpoint (metrics.go).
	metrics httpEndpoint
	// console is the web console's listener (console.go), over TLS when
	// consoleTLS.
	console    httpEndpoint
	consoleTLS bool

	// cluster is the cluster node under cluster-enabled yes, else nil
	// (cluster.go); migrateConns are MIGRATE's connections to its targets.
	cluster      *cluster.State
	migrateConns migrateConns
}

// stats are the counters INFO reports.
type stats struct {
	connectionsReceived atomic.Int64
	rejectedConnections atomic.Int64
	dirty               atomic.Int64 // changes since the last save
	errors              errorStats
}

// Option adjusts a server before it starts.
type Option func(*Server)

// WithClock makes the server read time from c (tests fast-forward TTLs).
func WithClock(c clock.Clock) Option { return func(s *Server) { s.clock = c } }

// WithLogger sends the server's log lines to l.
func WithLogger(l *log.Logger) Option { return func(s *Server) { s.log = l } }

// WithSupervised names the supervisor the process told it was ready
// ("upstart" or "systemd"; INFO's process_supervised, "no" without it).
func WithSupervised(mode string) Option { return func(s *Server) { s.supervised = mode } }

// New creates a server from cfg. It does not listen until Start. Unless cfg
// asks for persistence (config.Persistent: a config file, dir, save points,
// appendonly yes, ...), the server keeps its data in memory: it loads no
// dump.rdb from the working directory and turns the save points off.
func New(cfg *config.Config, opts ...Option) (*Server, error) {
	s := &Server{
		cfg:     cfg,
		clock:   clock.Real{},
		log:     log.New(os.Stderr, "", log.LstdFlags),
		clients: map[uint64]*Client{},
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
		started: time.Now(),
		runID:   newRunID(),
	}
	s.supervised = "no"
	s.cmdStats = make([]commandStats, commandCount)
	for _, o := range opts {
		o(s)
	}
	s.activeExpireEnabled.Store(true)
	_, s.wallClock = s.clock.(clock.Real)
	// Redis's defaults keep the data set in the working directory: load
	// dump.rdb from there, save it there by the save points and at shutdown.
	// Without a config file or a persistence directive, Keyhive keeps it in
	// memory instead (Start loads nothing), so a first run or an embedded
	// server neither leaves nor picks up a stray dump.rdb.
	if !cfg.Persistent() {
		if err := cfg.Set([]string{"save", ""}); err != nil {
			return nil, err
		}
	}
	s.ks = keyspace.New(cfg.Databases(), keyspace.Hooks{Expired: s.keyExpired, Modified: s.keyModified, Created: s.keyCreated, Len: values.Len})
	if err := s.initACL(); err != nil {
		return nil, err
	}
	if err := s.initSchema(); err != nil {
		return nil, err
	}
	s.aof, s.saver = durability.New(s.persistenceHost())
	s.barrier = s.aof.Barrier
	s.watchAccessPolicy()
	s.watchMaxMemory()
	s.watchAppendOnly()
	s.watchTrackingLimit()
	s.watchPort()
	s.watchNotify()
	s.watchDiscovery()
	s.watchClusterCompat()
	s.scripts = scripting.NewEngine()
	s.scripts.Logger = s.scriptLog
	// The client scripts' commands run as; not a connection, not listed.
	s.scriptClient = &Client{s: s}
	s.scriptClient.ctx = newCtx(s, s.scriptClient, nil)
	s.scriptHost.out.Errors = &s.stats.errors
	s.initReplication()
	return s, nil
}

// scriptLog writes a redis.log line at its level when the logger's sink
// knows levels (package internal/logging's, Redis's numbering), else as is.
func (s *Server) scriptLog(level int, msg string) {
	if l, ok := s.log.Writer().(interface{ LogLevel(level int, msg string) }); ok {
		l.LogLevel(level, msg)
		return
	}
	s.log.Print(msg)
}

// Threads is the GOMAXPROCS a server process wants: one per event loop
// (io-threads) and one for the server's other goroutines, so that a loop
// never waits for them.
func Threads(cfg *config.Config) int { return max(cfg.IOThreads(), 1) + 1 }

// Start opens the configured listeners (TCP on bind:port, the unix socket) and
// serves them in the background. Port 0 picks a free port; see Addr.
func (s *Server) Start() error {
	s.readRuntimeMem(monoNow())
	// The discovered prefixes' sketch counts in used memory, as the data it
	// describes does, though it was made before this reading.
	s.startupRuntime = s.evict.runtimeMem.Load() - s.discoveryMemory()
	s.startupMemory = s.usedMemory(monoNow(), 0)
	if s.cfg.Persistent() {
		// As Redis 7.0: with appendonly the AOF is the data set, else the RDB.
		load := s.saver.Load
		s.loadExpired.limit = s.cfg.ReplBacklogSize()
		if s.cfg.AppendOnly() {
			load = s.aof.Start
		}
		if err := load(); err != nil {
			return err
		}
		s.repl.RestoreHistory()
		s.loadExpired.propagate(s)
		s.saver.RemoveTempFiles()
	}
	if err := s.startLoops(); err != nil {
		s.Close()
		return err
	}
	// The cluster bus listens first: a node that cannot join its cluster
	// never takes a client.
	if s.cfg.ClusterEnabled() {
		if err := s.startCluster(); err != nil {
			s.Close()
			return err
		}
	}
	// Port 0 picks a free port, unless a unix socket or TLS port is
	// configured: then, as in Redis, it means no plain TCP listener.
	if port := s.cfg.Port(); port != 0 || (s.cfg.UnixSocket() == "" && s.cfg.TLSPort() == 0) {
		if err := s.listenTCP(port, nil); err != nil {
			return err
		}
	}
	if port := s.cfg.TLSPort(); port != 0 {
		tc, err := tlsConfig(s.cfg)
		if err != nil {
			s.Close()
			return err
		}
		if err := s.listenTCP(port, tc); err != nil {
			return err
		}
	}
	if path := s.cfg.UnixSocket(); path != "" {
		os.Remove(path)
		l, err := net.Listen("unix", path)
		if err != nil {
			s.Close()
			return fmt.Errorf("opening Unix socket %s: %w", path, err)
		}
		if perm := s.cfg.UnixSocketPerm(); perm != 0 {
			os.Chmod(path, os.FileMode(perm))
		}
		s.serve(l)
	}
	s.mu.Lock()
	n := len(s.listeners)
	s.mu.Unlock()
	if n == 0 {
		return errors.New("no listening socket could be opened")
	}
	if s.cluster != nil && s.cfg.Port() == 0 {
		s.announceClusterPort() // the free port just picked
	}
	if err := s.startMetrics(); err != nil {
		s.Close()
		return err
	}
	if err := s.startConsole(); err != nil {
		s.Close()
		return err
	}
	s.wg.Add(1)
	go s.cron()
	if s.cluster != nil {
		s.cluster.ResumeReplication() // a replica follows the master its nodes.conf names
	} else if host, port, ok := s.cfg.ReplicaOf(); ok {
		s.repl.Follow(host, port)
	}
	return nil
}

// listenTCP listens on port (0: a free one, the same for every address) at
// each bind address, with TLS when tc is set.
func (s *Server) listenTCP(port int, tc *tls.Config) error {
	ls, err := s.openTCP(port)
	if err != nil {
		s.Close()
		return err
	}
	for _, l := range ls {
		if tc != nil {
			l = tls.NewListener(l, tc)
		} else {
			s.mu.Lock()
			s.plainTCP = append(s.plainTCP, l)
			s.mu.Unlock()
		}
		s.serve(l)
	}
	return nil
}

// openTCP opens a listener on port (0: a free one, the same for every
// address) at each bind address; on an error it closes those it opened.
func (s *Server) openTCP(port int) ([]net.Listener, error) {
	ls, failed, err := listenAll(s.cfg.Bind(), port)
	if err != nil {
		return nil, fmt.Errorf("could not create server TCP listening socket %s: %w", failed, err)
	}
	return ls, nil
}

// listenAll listens on port at each address of a bind list, as Redis reads
// one: a "-" before an address that may be missing, "*" for every IPv4
// interface; port 0 picks a free port, the same for every address. On an
// error it closes those it opened and says which address failed.
func listenAll(binds []string, port int) (ls []net.Listener, failed string, err error) {
	for _, addr := range binds {
		optional := strings.HasPrefix(addr, "-")
		addr = strings.TrimPrefix(addr, "-")
		if addr == "*" {
			addr = "0.0.0.0"
		}
		hostPort := net.JoinHostPort(addr, strconv.Itoa(port))
		l, err := net.Listen("tcp", hostPort)
		if err != nil {
			if optional {
				continue
			}
			for _, l := range ls {
				l.Close()
			}
			return nil, hostPort, err
		}
		if port == 0 {
			port = l.Addr().(*net.TCPAddr).Port
		}
		ls = append(ls, l)
	}
	return ls, "", nil
}

func (s *Server) serve(l net.Listener) {
	s.mu.Lock()
	s.listeners = append(s.listeners, l)
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			conn, err := l.Accept()
			if err != nil {
				if s.isClosed() || errors.Is(err, net.ErrClosed) { // or moved (CONFIG SET port)
					return
				}
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					continue
				}
				s.log.Printf("accept: %v", err)
				time.Sleep(10 * time.Millisecond) // e.g. out of file descriptors
				continue
			}
			s.accept(conn)
		}
	}()
}

// Addr returns the address of the first TCP listener ("127.0.0.1:6379"), or of
// the unix socket when there is no TCP listener.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.listeners {
		if l.Addr().Network() == "tcp" {
			return l.Addr().String()
		}
	}
	if len(s.listeners) > 0 {
		return s.listeners[0].Addr().String()
	}
	return ""
}

// Keyspace returns the server's data, for embedding programs and tests.
func (s *Server) Keyspace() *keyspace.Keyspace { return s.ks }

// isClosed reports whether Close has begun, without waiting for s.mu.
func (s *Server) isClosed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// Close stops listening, disconnects every client and waits for the server's
// goroutines to finish.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		// Another Close (SHUTDOWN's) is under way: return when it is done,
		// so the process exits only after the AOF is written.
		s.mu.Unlock()
		<-s.stopped
		return nil
	}
	s.closed = true
	close(s.done)
	s.scripts.Kill() // a running script would keep its client's goroutine
	for _, l := range s.listeners {
		l.Close()
	}
	for _, c := range s.clients {
		c.disconnect()
	}
	s.mu.Unlock()
	s.stopLoops()
	s.stopMetrics()
	s.stopConsole()
	if s.cluster != nil {
		s.cluster.Close()
	}
	s.migrateConns.closeAll()
	s.wg.Wait()
	s.saver.Wait()
	s.aof.Stop() // everything acknowledged is written and synced
	s.aof.Wait() // no lock is held now that a cancelled rewrite could need
	if path := s.cfg.UnixSocket(); path != "" {
		os.Remove(path)
	}
	close(s.stopped)
	return nil
}

// Done is closed when the server has been closed (by Close or SHUTDOWN).
func (s *Server) Done() <-chan struct{} { return s.done }

// cron does the periodic work Redis's serverCron does: save points, and
// active expiry within its CPU budget (25% of each tick), at hz ticks per
// second.
func (s *Server) cron() {
	defer s.wg.Done()
	hz := max(s.cfg.Hz(), 1)
	tick := time.NewTicker(time.Second / time.Duration(hz))
	defer tick.Stop()
	var lastSecond int64
	for {
		select {
		case <-s.done:
			return
		case <-tick.C:
		}
		if s.debug.cronPaused.Load() {
			continue
		}
		s.saver.Cron()
		s.aof.Cron()
		s.sampleRates()
		s.redirectBlocked()
		s.repl.DropOverLimit()
		if now := s.clock.UnixMilli(); now/1000 != lastSecond {
			lastSecond = now / 1000
			s.closeIdleClients(now)
			s.releaseMemoryCron()
			s.repl.Cron()
		}
		if !s.activeExpireEnabled.Load() {
			continue
		}
		if s.IsReplica() {
			// The master's keys expire by its DELs; what a writable
			// replica's clients gave a TTL, the replica expires.
			s.ks.ExpireOwnKeys(s.clock.UnixMilli())
			continue
		}
		slice := time.Now() // when the cycle last paused
		began := slice
		deadline := slice.Add(time.Second / time.Duration(hz) / 4)
		budget := func() bool {
			now := time.Now()
			if now.Sub(slice) > expireSlice {
				// Commands share the execution thread (io-threads 1), and
				// only a goroutine that blocks lets the scheduler poll the
				// network for them: a Gosched would pick this one again.
				time.Sleep(time.Microsecond)
				now = time.Now()
				slice = now
			}
			return now.After(deadline)
		}
		now := s.clock.UnixMilli()
		sampled, removed := s.ks.ActiveExpire(now, budget)
		s.ks.ActiveSubexpire(now, budget, func(db *keyspace.DB, e *keyspace.Entry) { s.expireElements(db, e, now) })
		ended := time.Now()
		s.noteExpireCycle(sampled, removed, ended.Sub(began), ended.After(deadline))
		if s.tracking.queued.Load() {
			s.flushBroadcasts(nil)
		}
	}
}

// expireSlice is how long the active expiry cycle works before it pauses
// for the commands waiting behind it (up to a millisecond, the Go timer's
// granularity, when none are).
const expireSlice = 500 * time.Microsecond

func newRunID() string {
	var b [20]byte
	rand.Read(b[:])
	return fmt.Sprintf("%x", b)
}
