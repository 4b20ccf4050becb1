package server

import (
	"cmp"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/keyhive/keyhive/acl"
	"github.com/keyhive/keyhive/console"
	"github.com/keyhive/keyhive/discover"
)

// The read-only web console (package console) on console-bind:console-port,
// over TLS with the server's certificate when tls-port is set. The server
// is its Host: the figures come from the same counters NAMESPACE STATS,
// NAMESPACE DISCOVER, HOTKEYS GET, SLOWLOG GET and INFO read.

// startConsole listens on console-bind:console-port when the port is set.
func (s *Server) startConsole() error {
	port := s.cfg.ConsolePort()
	if port == 0 {
		return nil
	}
	lns, failed, err := listenAll(s.cfg.ConsoleBind(), port)
	if err != nil {
		return fmt.Errorf("could not open the console listener %s: %w", failed, err)
	}
	if len(lns) == 0 {
		return errors.New("no console listening socket could be opened")
	}
	srv := &http.Server{Handler: console.Handler(consoleHost{s}), ReadHeaderTimeout: 10 * time.Second, ErrorLog: s.log}
	if s.cfg.TLSPort() != 0 {
		tc, err := tlsConfig(s.cfg)
		if err != nil {
			return err
		}
		tc = tc.Clone()
		tc.ClientAuth = tls.NoClientCert // browsers bring a password, not a client certificate
		srv.TLSConfig = tc
		s.consoleTLS = true
	}
	s.console = httpEndpoint{srv: srv, lns: lns}
	for _, l := range lns {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if s.consoleTLS {
				srv.ServeTLS(l, "", "") // returns at Close
			} else {
				srv.Serve(l)
			}
		}()
	}
	return nil
}

func (s *Server) stopConsole() {
	if s.console.srv != nil {
		s.console.srv.Close()
	}
}

// ConsoleURL returns the console's address as a URL, "" when console-port
// is 0.
func (s *Server) ConsoleURL() string {
	if len(s.console.lns) == 0 {
		return ""
	}
	scheme := "http"
	if s.consoleTLS {
		scheme = "https"
	}
	return scheme + "://" + s.console.lns[0].Addr().String() + "/"
}

// consoleHost is the server as the console's Host.
type consoleHost struct{ s *Server }

// consoleViewer is an ACL user's permissions as a console viewer.
type consoleViewer struct{ p *acl.Perms }

func (v consoleViewer) MayRead(key []byte) bool { return v.p.MayRead(key) }

// mayView reports whether p may run INFO, what the console shows.
func mayView(p *acl.Perms) bool {
	info := table["info"]
	v, _ := p.Check(info.id, [][]byte{[]byte("info")}, nil)
	return v == acl.OK
}

func (h consoleHost) Authenticate(user, pass string) (console.Viewer, bool) {
	u := h.s.acl.User(user)
	if u == nil {
		return nil, false
	}
	p := u.Perms()
	if !p.Accepts([]byte(pass)) || !mayView(p) {
		return nil, false
	}
	return consoleViewer{p}, true
}

func (h consoleHost) Anonymous() (console.Viewer, bool) {
	p := h.s.acl.Default().Perms()
	if !p.AdmitsAnyone() || !mayView(p) {
		return nil, false
	}
	return consoleViewer{p}, true
}

// consoleTop is how many prefixes per depth, hot keys and slow log entries
// the console shows.
const consoleTop = 20

func (h consoleHost) Snapshot() console.Snapshot {
	s := h.s
	snap := console.Snapshot{
		Server:  s.infoFields("server", "redis_version", "keyhive_version", "uptime_in_seconds", "tcp_port", "process_id"),
		Memory:  s.infoFields("memory", "used_memory", "used_memory_human", "maxmemory", "maxmemory_human", "maxmemory_policy", "used_memory_peak"),
		HotKeys: s.consoleHotKeys(),
		SlowLog: s.consoleSlowLog(),
	}
	snap.Role.Replication = s.infoFields("replication")
	if s.cluster != nil {
		snap.Role.Cluster = true
		snap.Role.Nodes = strings.Split(strings.TrimSpace(s.cluster.Nodes()), "\n")
	}
	snap.Commands = s.consoleCommands()
	t := s.schema.Load()
	if t != nil && t.Declared() {
		for i := 1; i <= t.Len(); i++ {
			ns := i % t.Len() // the declared ones, then the default one
			d := t.Def(ns)
			n := console.Namespace{Name: d.Name, Figures: map[string]int64{},
				Quota: console.Quota{MaxKeys: d.MaxKeys, MaxMemory: d.MaxMemory, Evict: d.Evict.String(), Protected: d.Protected}}
			switch {
			case d.Pattern != "":
				n.Match = "pattern " + d.Pattern
			case ns != 0:
				n.Match = "prefix " + d.Prefix
			}
			n.Policy = strings.Join(d.Args()[3:], " ")
			for j, v := range statValues(t.Totals(ns)) {
				n.Figures[statFields[j]] = v
			}
			snap.Namespaces = append(snap.Namespaces, n)
		}
	}
	if t != nil && t.Discovery() != nil {
		disc := t.Discovery()
		snap.Discovery = &console.Discovery{Delimiter: string(disc.Config().Delimiter)}
		for depth := 1; depth <= disc.Config().Depth; depth++ {
			var level []console.Prefix
			for _, p := range disc.Top(depth, discover.Bytes, consoleTop) {
				cp := console.Prefix{Name: p.Name, Depth: p.Depth, Figures: map[string]int64{}, Error: map[string]int64{}}
				for f := range discover.NumFigures {
					cp.Figures[f.String()] = p.Figures[f]
					cp.Error[f.String()] = p.Error[f]
				}
				level = append(level, cp)
			}
			snap.Discovery.Depths = append(snap.Discovery.Depths, level)
		}
	}
	return snap
}

// infoFields returns an INFO section's fields, only those named when names
// are given.
func (s *Server) infoFields(section string, names ...string) map[string]string {
	var b strings.Builder
	s.writeInfoSection(&b, section)
	fields := map[string]string{}
	for _, line := range strings.Split(b.String(), "\r\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && (len(names) == 0 || slices.Contains(names, k)) {
			fields[k] = v
		}
	}
	return fields
}

// consoleCommands joins INFO commandstats and latencystats by command.
func (s *Server) consoleCommands() []console.CommandStat {
	byName := map[string]map[string]string{}
	add := func(section, prefix string) {
		for k, v := range s.infoFields(section) {
			name, ok := strings.CutPrefix(k, prefix)
			if !ok {
				continue
			}
			if byName[name] == nil {
				byName[name] = map[string]string{}
			}
			for _, kv := range strings.Split(v, ",") {
				if f, val, ok := strings.Cut(kv, "="); ok {
					byName[name][f] = val
				}
			}
		}
	}
	add("commandstats", "cmdstat_")
	add("latencystats", "latency_percentiles_usec_")
	var out []console.CommandStat
	for name, f := range byName {
		out = append(out, console.CommandStat{Name: name, Fields: f})
	}
	slices.SortFunc(out, func(a, b console.CommandStat) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// consoleHotKeys is HOTKEYS GET's heaviest keys, nil without a session.
func (s *Server) consoleHotKeys() *console.HotKeys {
	h := &s.hotkeys
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.session
	if t == nil {
		return nil
	}
	hk := &console.HotKeys{Active: t.active}
	top := func(k *topK) []console.HotKey {
		if k == nil {
			return nil
		}
		items := slices.Clone(k.items)
		slices.SortFunc(items, func(a, b topItem) int {
			if c := cmp.Compare(b.count, a.count); c != 0 {
				return c
			}
			return strings.Compare(a.key, b.key)
		})
		var out []console.HotKey
		for _, it := range items[:min(t.k, consoleTop, len(items))] {
			if it.count > 0 {
				out = append(out, console.HotKey{Key: it.key, Count: it.count})
			}
		}
		return out
	}
	hk.ByCPU, hk.ByNet = top(t.cpu), top(t.net)
	return hk
}

// consoleSlowLog is SLOWLOG GET's newest entries with their key arguments.
// An entry whose keys cannot be told from its arguments counts them all as
// keys, so that the console hides them unless the viewer reads every key.
func (s *Server) consoleSlowLog() []console.SlowEntry {
	l := &s.slowlog
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []console.SlowEntry
	for i := len(l.entries) - 1; i >= max(0, len(l.entries)-consoleTop); i-- {
		e := &l.entries[i]
		ce := console.SlowEntry{ID: e.id, Unix: e.unix, Micros: e.micros, Args: slices.Clone(e.args), Client: e.addr, ClientName: e.name}
		args := make([][]byte, len(e.args))
		for j, a := range e.args {
			args[j] = []byte(a)
		}
		var keys [][]byte
		all := true
		if cmd := findCommand(args); cmd != nil && len(args) > 0 {
			keys, all = cmd.keyArgs(args, nil)
		}
		if all {
			keys = args[1:]
		}
		for _, k := range keys {
			ce.Keys = append(ce.Keys, string(k))
		}
		out = append(out, ce)
	}
	return out
}
