// Package crashtest is the crash harness of issue 21, "no acknowledged write
// is ever lost": it runs a server (keyhive or redis-server) with the
// append-only file on, writes to it from many connections, kills it with
// SIGKILL at a random moment (optionally during an AOF rewrite, a BGSAVE, or
// after a rewrite made to fail), restarts it from the same directory and
// checks that every acknowledged write is there, that each connection's data
// is a prefix of what it sent, that MULTI and EVAL took effect whole or not at
// all, and that no value is torn. Trials of a mode chain in one directory:
// each trial writes a new generation of keys and re-checks all earlier ones.
//
// SIGKILL ends the process, not the machine: what the server handed to the
// kernel (write) survives even without fsync. So the harness catches writes
// acknowledged before they reached the file (or reached a file that the
// restart does not read), not unsynced data lost to a power cut.
package crashtest

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"
)

// Kill kinds: what runs when the server is killed.
const (
	KillPlain       = "plain"       // the load alone
	KillRewrite     = "bgrewrite"   // a BGREWRITEAOF in progress
	KillAutoRewrite = "autorewrite" // an automatic rewrite in progress (auto-aof-rewrite-percentage 5)
	KillBGSave      = "bgsave"      // a BGSAVE in progress
	KillRewriteFail = "rewritefail" // a BGREWRITEAOF failed earlier in the trial
)

// KillKinds lists every kill kind.
var KillKinds = []string{KillPlain, KillRewrite, KillAutoRewrite, KillBGSave, KillRewriteFail}

// Mode is one configuration of the server and of the kill.
type Mode struct {
	Fsync     string // always or everysec
	IOThreads int
	Kill      string
}

func (m Mode) String() string { return fmt.Sprintf("%s/io%d/%s", m.Fsync, m.IOThreads, m.Kill) }

// Modes returns every combination of the given settings.
func Modes(fsyncs []string, ioThreads []int, kills []string) []Mode {
	var out []Mode
	for _, f := range fsyncs {
		for _, io := range ioThreads {
			for _, k := range kills {
				out = append(out, Mode{Fsync: f, IOThreads: io, Kill: k})
			}
		}
	}
	return out
}

// MaxEverysecWindow is the largest loss window accepted under appendfsync
// everysec. Redis's everysec lets replies go out with the write to the file
// postponed while the previous fsync is still running, for up to 2 seconds
// (flushAppendOnlyFile), so a kill can lose up to about 2 s of acknowledged
// writes by design; more means writes were lost in another way.
const MaxEverysecWindow = 2 * time.Second

// Config is one run of the harness against one server.
type Config struct {
	Server   string        // name in the report: keyhive or redis
	Binary   string        // the server binary
	Modes    []Mode        // the modes to run, each in a directory of its own
	Trials   int           // kills per mode
	Duration time.Duration // the longest a trial's load runs before the kill
	Conns    int           // writing connections
	Seed     int64         // seeds the operations and the kill moments
	Ballast  int           // MB of data loaded before the first trial of the rewrite and save modes, so that they take a while
	Dir      string        // where the modes' directories go
	Log      io.Writer     // progress lines (nil: none)
	// Modules adds the operations of Redis 8's module types, JSON, the
	// probabilistic types and vector sets, to the load (Keyhive's; Redis 7
	// has none).
	Modules bool
}

// Result is what one mode's trials found.
type Result struct {
	Server string
	Mode   Mode
	Trials int
	Acked  int // acknowledged operations
	// Lost counts acknowledged operations missing after a restart (including
	// operations of earlier trials that a later restart no longer has).
	Lost       int
	Window     time.Duration // the oldest lost acknowledged write's age at the kill
	InFlight   int           // operations in flight at the kills
	InFlightIn int           // of which present after the restart
	Torn       int
	Broken     int // MULTI or EVAL partly applied, or their counters off
	Gaps       int // connections whose surviving operations are not a prefix of those sent
	Unexpected int // effects of operations never sent
	Failed     int // restarts that failed
	Died       int // servers that exited before the kill
	Hits       int // trials whose kill came while the rewrite or save ran (or after the injected failure)
	TempFiles  int // temporary files left in the directory at the end
	Refused    int // operations refused with an error reply (the connection stops there)
	Notes      []string
}

func (r *Result) note(format string, args ...any) {
	if len(r.Notes) < 40 {
		r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
	}
}

// Bad reports whether the result breaks the durability promise.
func (r *Result) Bad() bool {
	return r.Lost > 0 && r.Mode.Fsync == "always" || r.Torn > 0 || r.Broken > 0 || r.Gaps > 0 ||
		r.Unexpected > 0 || r.Failed > 0 || r.Died > 0 || r.Window > MaxEverysecWindow
}

// generation is one trial's writes: what each connection sent and, after
// the first restart, which operations survived (what later restarts must keep).
type generation struct {
	id      int
	logs    []connLog
	present [][]bool
	damage  []damage // per connection, what the last verification found
}

// damage is what a verification found wrong in one connection's data; a
// later trial reports only what is new.
type damage struct{ torn, broken, unexpected, gaps int }

// Run runs every mode of cfg and returns a result per mode.
func Run(cfg Config) ([]*Result, error) {
	if cfg.Conns <= 0 {
		cfg.Conns = 12
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	var out []*Result
	for i, m := range cfg.Modes {
		dir := filepath.Join(cfg.Dir, cfg.Server+"-"+strings.ReplaceAll(m.String(), "/", "-"))
		if err := os.RemoveAll(dir); err != nil {
			return out, err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return out, err
		}
		rng := rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(i)))
		r, err := runMode(cfg, m, dir, rng)
		out = append(out, r)
		if err != nil {
			return out, fmt.Errorf("%s %s: %w", cfg.Server, m, err)
		}
	}
	return out, nil
}

// modeRun is the state of one mode's chain of trials.
type modeRun struct {
	cfg     Config
	mode    Mode
	dir     string // the mode's directory: data/ and the server logs
	data    string
	rng     *rand.Rand
	res     *Result
	gens    []*generation
	ballast []int // fields of each ballast hash
	srv     *proc
	nextGen int
	opDur   time.Duration // how long the last rewrite or save seen whole took
}

func runMode(cfg Config, m Mode, dir string, rng *rand.Rand) (*Result, error) {
	r := &modeRun{cfg: cfg, mode: m, dir: dir, data: filepath.Join(dir, "data"), rng: rng, opDur: 200 * time.Millisecond,
		res: &Result{Server: cfg.Server, Mode: m}}
	defer func() {
		if r.srv != nil {
			r.srv.kill()
		}
	}()
	for t := 0; t < cfg.Trials; t++ {
		if err := r.trial(); err != nil {
			return r.res, err
		}
	}
	r.res.TempFiles = len(tempFiles(r.data))
	return r.res, nil
}

// fresh starts the server on an empty directory (the first trial, or after
// a failed restart) and loads the ballast.
func (r *modeRun) fresh() error {
	if err := os.RemoveAll(r.data); err != nil {
		return err
	}
	if err := os.MkdirAll(r.data, 0o755); err != nil {
		return err
	}
	r.gens, r.ballast = nil, nil
	srv, err := startServer(r.cfg.Binary, r.mode, r.data, filepath.Join(r.dir, "server.log"), 30*time.Second)
	if err != nil {
		return err
	}
	r.srv = srv
	if r.mode.Kill != KillPlain && r.cfg.Ballast > 0 {
		return r.loadBallast()
	}
	return nil
}

// Ballast: hashes of 1000 fields of 1000 bytes (1 MB each), written
// pipelined, checked by length after each restart.
const ballastFields, ballastValue = 1000, 1000

func (r *modeRun) loadBallast() error {
	c, err := dial(r.srv.addr, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.close()
	v := strings.Repeat("b", ballastValue)
	for h := 0; h < r.cfg.Ballast; h++ {
		var cmds [][]string
		for f := 0; f < ballastFields; f += 100 {
			cmd := []string{"HSET", fmt.Sprintf("ballast:%d", h)}
			for i := f; i < f+100; i++ {
				cmd = append(cmd, fmt.Sprintf("f%d", i), v)
			}
			cmds = append(cmds, cmd)
		}
		replies, err := c.pipe(cmds)
		if err != nil {
			return err
		}
		if msg := replyErr(replies); msg != "" {
			return fmt.Errorf("loading the ballast: %s", msg)
		}
		r.ballast = append(r.ballast, ballastFields)
	}
	return nil
}

// trial runs the load on a new generation, kills the server as the mode
// says, restarts it and verifies every generation.
func (r *modeRun) trial() error {
	if r.srv == nil {
		if err := r.fresh(); err != nil {
			return err
		}
	}
	r.nextGen++
	g := &generation{id: r.nextGen}
	r.res.Trials++
	stop := make(chan struct{})
	var ops atomic.Int64
	logs, wait := runLoad(r.srv.addr, load{r.cfg.Seed, r.cfg.Modules}, g.id, r.cfg.Conns, stop, &ops)
	g.logs = logs
	killAt, injected, err := r.killDuring(&ops)
	close(stop)
	wait()
	for _, name := range injected {
		os.Remove(name)
	}
	if err != nil {
		return err
	}
	r.gens = append(r.gens, g)
	for i := range g.logs {
		l := &g.logs[i]
		r.res.Acked += l.acked
		r.res.InFlight += l.sent - l.acked
		if l.err != "" {
			r.res.Refused++
			r.res.note("trial %d conn %d: %s", r.res.Trials, i, l.err)
		}
	}
	fmt.Fprintf(r.cfg.Log, "%s %s trial %d: %d ops acknowledged, killed\n", r.cfg.Server, r.mode, r.res.Trials, ops.Load())

	srv, err := startServer(r.cfg.Binary, r.mode, r.data, filepath.Join(r.dir, "server.log"), 120*time.Second)
	if err != nil {
		r.res.Failed++
		r.res.note("trial %d: restart failed: %v", r.res.Trials, err)
		fmt.Fprintf(r.cfg.Log, "%s %s trial %d: restart failed: %v\n", r.cfg.Server, r.mode, r.res.Trials, err)
		// Keep the directory for a look, start the chain again elsewhere.
		os.Rename(r.data, fmt.Sprintf("%s.failed%d", r.data, r.res.Trials))
		r.srv = nil
		return nil
	}
	r.srv = srv
	return r.verify(killAt)
}

// killDuring waits for the mode's moment and kills the server. It returns
// when the kill happened and the directories it made to fail a rewrite.
func (r *modeRun) killDuring(ops *atomic.Int64) (time.Time, []string, error) {
	d := r.cfg.Duration
	// The kill (or the event before it) comes in the second half of the
	// trial, so that each connection has written a good number of operations.
	at := d/2 + time.Duration(r.rng.Int64N(int64(d/2)+1))
	side, err := dial(r.srv.addr, 2*time.Second)
	if err != nil {
		return time.Time{}, nil, err
	}
	defer side.close()
	// A hung server must not hang the harness.
	side.conn.SetDeadline(time.Now().Add(2*d + 90*time.Second))
	kill := func() time.Time {
		t := time.Now()
		select {
		case <-r.srv.exited:
			r.res.Died++
			r.res.note("trial %d: the server exited before the kill (%v): %s", r.res.Trials, r.srv.err, tail(r.srv.log, 3))
		default:
		}
		r.srv.kill()
		r.srv = nil
		return t
	}
	field := func(section, name string) string {
		m, err := info(side, section)
		if err != nil {
			return ""
		}
		return m[name]
	}
	switch r.mode.Kill {
	case KillPlain:
		time.Sleep(at)
		return kill(), nil, nil
	case KillRewrite, KillBGSave, KillAutoRewrite:
		cmd, flag, section := "BGREWRITEAOF", "aof_rewrite_in_progress", "persistence"
		if r.mode.Kill == KillBGSave {
			cmd, flag = "BGSAVE", "rdb_bgsave_in_progress"
		}
		if r.mode.Kill == KillAutoRewrite {
			// Not before the load has run a while; then at the first
			// moment an automatic rewrite is seen running.
			time.Sleep(at / 2)
			cmd = ""
		} else {
			time.Sleep(at)
		}
		if cmd != "" {
			v, err := side.do(cmd)
			if err != nil {
				return time.Time{}, nil, err
			}
			if e, ok := v.(replyError); ok {
				r.res.note("trial %d: %s: %v", r.res.Trials, cmd, e)
			}
		}
		// Kill at a random moment of the rewrite or save, while INFO still
		// shows it running: 10-90% of the last one's duration seen.
		delay := time.Duration(float64(r.opDur) * (0.1 + 0.8*r.rng.Float64()))
		// An automatic rewrite may take a while to come; a BGREWRITEAOF or
		// BGSAVE not seen running within a second ended before the first look.
		deadline := time.Now().Add(time.Second)
		if cmd == "" {
			deadline = time.Now().Add(d + 5*time.Second)
		}
		var started time.Time
		for time.Now().Before(deadline) {
			running := field(section, flag) == "1"
			switch {
			case running && started.IsZero():
				started = time.Now()
			case !running && !started.IsZero():
				// It ended before the delay: kill now, not counted as a hit.
				r.opDur = time.Since(started)
				r.res.note("trial %d: the %s ended %v in, before the kill", r.res.Trials, r.mode.Kill, r.opDur.Round(time.Millisecond))
				return kill(), nil, nil
			}
			if running && time.Since(started) >= delay {
				r.res.Hits++
				return kill(), nil, nil
			}
			time.Sleep(2 * time.Millisecond)
		}
		r.res.note("trial %d: no %s seen running", r.res.Trials, r.mode.Kill)
		return kill(), nil, nil
	case KillRewriteFail:
		time.Sleep(at / 2)
		// A directory where the new base file goes makes the rename at the
		// end of the rewrite fail, in redis-server as in Keyhive.
		names, err := nextBaseNames(r.data)
		if err != nil {
			return time.Time{}, nil, err
		}
		var made []string
		for _, n := range names {
			if err := os.Mkdir(n, 0o755); err == nil {
				made = append(made, n)
			}
		}
		v, err := side.do("BGREWRITEAOF")
		if err != nil {
			return time.Time{}, made, err
		}
		if e, ok := v.(replyError); ok {
			r.res.note("trial %d: BGREWRITEAOF: %v", r.res.Trials, e)
		}
		// Wait for the rewrite to end (redis-server: also for the parent to
		// notice its child is done), then let the load run on.
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			m, err := info(side, "persistence")
			if err != nil {
				return time.Time{}, made, err
			}
			if m["aof_rewrite_in_progress"] == "0" && m["aof_rewrite_scheduled"] == "0" {
				if m["aof_last_bgrewrite_status"] == "err" {
					r.res.Hits++
				} else {
					r.res.note("trial %d: the injected rewrite failure did not happen (status %s)", r.res.Trials, m["aof_last_bgrewrite_status"])
				}
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		// Under everysec a loss is a failure only beyond MaxEverysecWindow:
		// write on for longer than that, so that losing the writes since
		// the failed rewrite shows.
		after := d/4 + time.Duration(r.rng.Int64N(int64(d/4)+1))
		if r.mode.Fsync == "everysec" {
			after += MaxEverysecWindow
		}
		time.Sleep(after)
		return kill(), made, nil
	}
	return time.Time{}, nil, fmt.Errorf("unknown kill kind %q", r.mode.Kill)
}

// verify checks every generation against what it sent and what earlier
// restarts found, and the ballast.
func (r *modeRun) verify(killAt time.Time) error {
	c, err := dial(r.srv.addr, 2*time.Second)
	if err != nil {
		return err
	}
	defer c.close()
	c.conn.SetDeadline(time.Now().Add(5 * time.Minute))
	for h, want := range r.ballast {
		v, err := c.do("HLEN", fmt.Sprintf("ballast:%d", h))
		if err != nil {
			return err
		}
		if n, _ := v.(int64); int(n) != want {
			r.res.Lost += want - int(n)
			r.res.Window = max(r.res.Window, time.Hour)
			r.res.note("ballast:%d has %v fields, not %d", h, v, want)
			r.ballast[h] = int(n)
		}
	}
	trial := r.res.Trials
	var sum struct {
		ops, conns int
		age        time.Duration
		example    string
		damaged    int      // connections with new damage (notes for the first two only)
		gaps       []string // connections whose surviving operations became a non-prefix
	}
	defer func() {
		if len(sum.gaps) > 0 {
			r.res.note("trial %d: surviving operations not a prefix of those sent on %d connections (%s)", trial, len(sum.gaps), strings.Join(sum.gaps, ", "))
		}
		if sum.ops > 0 {
			r.res.note("trial %d: lost %d acknowledged ops on %d connections, the oldest acknowledged %v before the kill (%s)",
				trial, sum.ops, sum.conns, sum.age.Round(time.Millisecond), sum.example)
		}
	}()
	for _, g := range r.gens {
		current := g.present == nil
		if current {
			g.present = make([][]bool, len(g.logs))
			g.damage = make([]damage, len(g.logs))
		}
		for conn := range g.logs {
			l := &g.logs[conn]
			f, err := verifyConn(c, load{r.cfg.Seed, r.cfg.Modules}, g.id, conn, l.sent)
			if err != nil {
				return fmt.Errorf("verifying g%d c%d: %w", g.id, conn, err)
			}
			// Which operations must be there: the acknowledged ones after
			// this trial's kill, what the last restart found after later ones.
			must := func(i int) bool { return i < l.acked }
			if !current {
				prev := g.present[conn]
				must = func(i int) bool { return prev[i] }
			}
			lost, firstLost, gap := 0, -1, false
			for i, ok := range f.present {
				if !ok && must(i) {
					lost++
					if firstLost < 0 {
						firstLost = i
					}
				}
				if ok && i > 0 && !f.present[i-1] {
					gap = true
				}
				if ok && !current && !g.present[conn][i] {
					r.res.Unexpected++
					r.res.note("trial %d: g%d c%d op %d came back", trial, g.id, conn, i+1)
				}
			}
			if current && l.sent > l.acked && f.present[l.sent-1] {
				r.res.InFlightIn++
			}
			now := damage{f.torn, f.broken, f.unexpected, 0}
			if gap {
				now.gaps = 1
			}
			before := g.damage[conn]
			if now.torn > before.torn || now.broken > before.broken || now.unexpected > before.unexpected {
				if sum.damaged++; sum.damaged <= 2 {
					for _, n := range f.notes {
						r.res.note("trial %d: %s", trial, n)
					}
				}
			}
			if now.gaps > before.gaps {
				sum.gaps = append(sum.gaps, fmt.Sprintf("g%d c%d", g.id, conn))
			}
			r.res.Torn += max(0, now.torn-before.torn)
			r.res.Broken += max(0, now.broken-before.broken)
			r.res.Unexpected += max(0, now.unexpected-before.unexpected)
			r.res.Gaps += max(0, now.gaps-before.gaps)
			g.damage[conn] = now
			if lost > 0 {
				r.res.Lost += lost
				// An in-flight operation kept by one restart and lost by a
				// later one has no time of its own: its predecessor's.
				age := time.Hour
				if n := min(firstLost, len(l.ackAt)-1); n >= 0 {
					age = killAt.Sub(time.Unix(0, l.ackAt[n]))
				}
				r.res.Window = max(r.res.Window, age)
				sum.ops += lost
				sum.conns++
				if age > sum.age {
					sum.age = age
					sum.example = fmt.Sprintf("g%d c%d op %d %s", g.id, conn, firstLost+1, opNames[kindOf(load{r.cfg.Seed, r.cfg.Modules}, g.id, conn, firstLost+1)])
				}
			}
			g.present[conn] = f.present
		}
	}
	return nil
}

// Report writes the summary table of results.
func Report(w io.Writer, results []*Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "server\tfsync\tio\tkill\ttrials\thits\tacked\tlost\twindow\tin-flight kept\ttorn\tbroken\tgaps\tunexpected\tfailed restarts\tdied\trefused\ttemp files\tverdict\t")
	for _, r := range results {
		window := "-"
		if r.Window > 0 {
			window = r.Window.Round(time.Millisecond).String()
		}
		verdict := "ok"
		if r.Bad() {
			verdict = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\t%d\t%d\t%d\t%s\t%d/%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t\n",
			r.Server, r.Mode.Fsync, r.Mode.IOThreads, r.Mode.Kill, r.Trials, r.Hits, r.Acked, r.Lost, window,
			r.InFlightIn, r.InFlight, r.Torn, r.Broken, r.Gaps, r.Unexpected, r.Failed, r.Died, r.Refused, r.TempFiles, verdict)
	}
	tw.Flush()
	for _, r := range results {
		for _, n := range r.Notes {
			fmt.Fprintf(w, "%s %s: %s\n", r.Server, r.Mode, n)
		}
	}
}

// AnyBad reports whether any result breaks the durability promise.
func AnyBad(results []*Result) bool {
	for _, r := range results {
		if r.Bad() {
			return true
		}
	}
	return false
}
