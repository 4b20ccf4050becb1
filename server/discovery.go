package server

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/keyhive/keyhive/discover"
	"github.com/keyhive/keyhive/internal/promtext"
	"github.com/keyhive/keyhive/keyspace"
)

// The discovered prefixes (package discover keeps them): the sketch rides
// on the key schema's Table, the one Schema the keyspace reports to, so a
// server without declarations but with discovery on has a Table that only
// feeds it. s.discovery is the sketch in force; it and the Table change
// together under the exclusive lock.

// newDiscovery returns an empty sketch shaped by the namespace-discovery
// directives, nil when discovery is off.
func (s *Server) newDiscovery() *discover.Sketch {
	if !s.cfg.Discovery() {
		return nil
	}
	return discover.New(discover.Config{
		Delimiter: s.cfg.DiscoveryDelimiter(),
		Depth:     s.cfg.DiscoveryDepth(),
		Width:     s.cfg.DiscoveryCapacity(),
		DBs:       s.ks.Len(),
		Seed:      rand.Uint64(),
	})
}

// watchDiscovery applies CONFIG SET of the namespace-discovery directives:
// a new sketch, into which the keys present are counted again under the
// exclusive lock. CONFIG SET runs under the keyspace's shared lock (inside
// EXEC, under its keys' locks), so the recount runs just after it, in the
// background.
func (s *Server) watchDiscovery() {
	apply := func() {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.discoveryMu.Lock()
			defer s.discoveryMu.Unlock()
			var all keyspace.LockSet
			all.All()
			db := s.ks.Lock(0, &all)
			defer s.ks.Unlock(db, &all)
			s.discovery = s.newDiscovery()
			s.setSchema(s.schemaDefs())
		}()
	}
	for _, name := range []string{"namespace-discovery", "namespace-discovery-delimiter", "namespace-discovery-depth", "namespace-discovery-capacity"} {
		s.cfg.OnChange(name, apply)
	}
}

// discovery returns the sketch in force, replying an error when discovery
// is off.
func discoverySketch(x *Ctx) (*discover.Sketch, bool) {
	if t := x.s.schema.Load(); t != nil && t.Discovery() != nil {
		return t.Discovery(), true
	}
	x.W.Error("ERR prefix discovery is off (CONFIG SET namespace-discovery yes)")
	return nil, false
}

// defaultDiscoverCount is how many prefixes DISCOVER, INFO and /metrics
// list when not told.
const defaultDiscoverCount = 10

// NAMESPACE DISCOVER [DEPTH n] [COUNT k] [BY figure]: the top prefixes of
// depth n (default 1) by figure (default bytes), with their figures and
// error bounds. "ORDER BY figure" is BY's long form.
func namespaceDiscover(x *Ctx) {
	disc, ok := discoverySketch(x)
	if !ok {
		return
	}
	depth, count, by := 1, defaultDiscoverCount, discover.Bytes
	args := x.Args[2:]
	for len(args) > 0 {
		opt := strings.ToLower(string(args[0]))
		if opt == "order" && len(args) > 1 && strings.EqualFold(string(args[1]), "by") {
			opt, args = "by", args[1:]
		}
		if len(args) < 2 || (opt != "depth" && opt != "count" && opt != "by") {
			x.W.Error(errSyntax)
			return
		}
		v := string(args[1])
		args = args[2:]
		switch opt {
		case "depth":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > disc.Config().Depth {
				x.W.Error(fmt.Sprintf("ERR DEPTH must be between 1 and %d (namespace-discovery-depth)", disc.Config().Depth))
				return
			}
			depth = n
		case "count":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				x.W.Error("ERR COUNT must be a positive integer")
				return
			}
			count = n
		case "by":
			f, ok := discover.ParseFigure(strings.ToLower(v))
			if !ok {
				x.W.Error("ERR BY takes keys, volatile, bytes, reads, writes, evictions or expirations")
				return
			}
			by = f
		}
	}
	top := disc.Top(depth, by, count)
	x.W.Array(len(top))
	for _, p := range top {
		x.W.Map(3 + int(discover.NumFigures))
		x.W.BulkString("prefix")
		x.W.BulkString(p.Name)
		x.W.BulkString("depth")
		x.W.Int(int64(p.Depth))
		for f := range discover.NumFigures {
			x.W.BulkString(f.String())
			x.W.Int(p.Figures[f])
		}
		x.W.BulkString("error")
		x.W.Map(int(discover.NumFigures))
		for f := range discover.NumFigures {
			x.W.BulkString(f.String())
			x.W.Int(p.Error[f])
		}
	}
}

// NAMESPACE PROMOTE prefix [NAME name] [policy options]: declares a
// discovered prefix as a namespace, named after the prefix unless NAME
// says otherwise. It propagates as the NAMESPACE DEFINE it amounts to: a
// replica's or a reloaded AOF's sketch need not hold the prefix.
func namespacePromote(x *Ctx) {
	disc, ok := discoverySketch(x)
	if !ok {
		return
	}
	prefix := x.Args[2]
	if len(prefix) == 0 || !disc.Discovered(prefix) {
		x.W.Error(fmt.Sprintf("ERR '%s' is not a discovered prefix (NAMESPACE DISCOVER lists them; NAMESPACE DEFINE declares any)", prefix))
		return
	}
	rest := stringArgs(x.Args[3:])
	name := ""
	if len(rest) >= 2 && strings.EqualFold(rest[0], "name") {
		name, rest = rest[1], rest[2:]
	} else {
		name = prefixName(string(prefix), disc.Config().Delimiter)
		for _, d := range x.s.schemaDefs() {
			if d.Name == name && (d.Prefix != string(prefix) || d.Pattern != "") {
				// DEFINE would replace it: a derived name must not.
				x.W.Error(fmt.Sprintf("ERR namespace '%s' already exists: give PROMOTE a NAME", name))
				return
			}
		}
	}
	args := append([]string{name, "PREFIX", string(prefix)}, rest...)
	if !define(x, args) {
		return
	}
	argv := [][]byte{x.Args[0], []byte("DEFINE")}
	for _, a := range args {
		argv = append(argv, []byte(a))
	}
	x.PropagateAs(argv...)
	x.W.BulkString(name)
}

// prefixName is the namespace name PROMOTE gives prefix: its delimiters
// and the bytes a name cannot hold as '-', a final delimiter dropped
// ("ql:v1:link:" is "ql-v1-link").
func prefixName(prefix string, delim byte) string {
	prefix = strings.TrimSuffix(prefix, string(delim))
	b := []byte(prefix)
	for i, c := range b {
		if c == delim || c <= ' ' || c == ',' || c == '=' || c == ':' || c >= 0x7f {
			b[i] = '-'
		}
	}
	return string(b)
}

// discoveredInfoOrder is the figure INFO and /metrics rank prefixes by.
const discoveredInfoOrder = discover.Bytes

// discoveryMemory is the bytes the discovered prefixes' sketch holds, 0
// with discovery off.
func (s *Server) discoveryMemory() int64 {
	if t := s.schema.Load(); t != nil && t.Discovery() != nil {
		return t.Discovery().MemoryBytes()
	}
	return 0
}

// writeDiscoveredInfo is INFO namespaces' discovered prefixes: per depth,
// the top ones by bytes, as discovered_d<depth>_<rank>:prefix=...,keys=...
// (the prefix's bytes that would break the line or its fields escaped as
// \xHH), and the error bounds as <figure>_err.
func (s *Server) writeDiscoveredInfo(b *strings.Builder) {
	t := s.schema.Load()
	if t == nil || t.Discovery() == nil {
		return
	}
	disc := t.Discovery()
	cfg := disc.Config()
	fmt.Fprintf(b, "discovery_depth:%d\r\ndiscovery_capacity:%d\r\ndiscovery_key_sample_rate:%d\r\ndiscovery_event_sample_rate:%d\r\ndiscovery_memory_bytes:%d\r\n",
		cfg.Depth, cfg.Width, discover.KeyRate, discover.EventRate, disc.MemoryBytes())
	for d := 1; d <= cfg.Depth; d++ {
		for i, p := range disc.Top(d, discoveredInfoOrder, defaultDiscoverCount) {
			fmt.Fprintf(b, "discovered_d%d_%d:prefix=%s", d, i+1, infoEscape(p.Name))
			for f := range discover.NumFigures {
				fmt.Fprintf(b, ",%s=%d", f, p.Figures[f])
			}
			for f := range discover.NumFigures {
				fmt.Fprintf(b, ",%s_err=%d", f, p.Error[f])
			}
			b.WriteString("\r\n")
		}
	}
}

func infoEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == ',' || c == '=' || c == '\\' {
			fmt.Fprintf(&b, `\x%02x`, c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// writeDiscoveryMetrics writes the top prefixes of each depth by bytes,
// labelled by depth and prefix (none while discovery is off).
func (s *Server) writeDiscoveryMetrics(p *promtext.Writer) {
	t := s.schema.Load()
	if t == nil || t.Discovery() == nil {
		return
	}
	disc := t.Discovery()
	var top []discover.Prefix
	for d := 1; d <= disc.Config().Depth; d++ {
		top = append(top, disc.Top(d, discoveredInfoOrder, defaultDiscoverCount)...)
	}
	p.One("keyhive_discovery_memory_bytes", promtext.Gauge, "Memory the discovered prefixes' sketch holds", float64(disc.MemoryBytes()))
	for f := range discover.NumFigures {
		name := "keyhive_discovered_prefix_" + discoveryMetricNames[f]
		p.Family(name, discoveryMetricKinds[f], "Estimated "+discoveryMetricHelp[f]+" of the prefix, one of the top by bytes at its depth (NAMESPACE DISCOVER)")
		for _, x := range top {
			p.Sample(name, float64(x.Figures[f]), "depth", strconv.Itoa(x.Depth), "prefix", metricLabel(x.Name))
		}
		errName := name + "_error"
		p.Family(errName, promtext.Gauge, "The error bound of "+name+" (99.9%)")
		for _, x := range top {
			p.Sample(errName, float64(x.Error[f]), "depth", strconv.Itoa(x.Depth), "prefix", metricLabel(x.Name))
		}
	}
}

// metricLabel makes a prefix a label value: the text format needs UTF-8,
// which binary keys (and a prefix cut inside a character) are not.
func metricLabel(prefix string) string { return strings.ToValidUTF8(prefix, "\uFFFD") }

var (
	discoveryMetricNames = [discover.NumFigures]string{"keys", "keys_expiring", "bytes", "reads_total", "writes_total", "evictions_total", "expirations_total"}
	discoveryMetricHelp  = [discover.NumFigures]string{"keys", "keys with a TTL", "bytes", "lookups", "writes", "evictions", "expirations"}
	discoveryMetricKinds = [discover.NumFigures]string{promtext.Gauge, promtext.Gauge, promtext.Gauge, promtext.Counter, promtext.Counter, promtext.Counter, promtext.Counter}
)
