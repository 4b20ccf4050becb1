// Package console is Keyhive's read-only web console: one page, embedded in
// the binary, that polls a JSON snapshot of the server (/api/state) every
// few seconds and draws it. It never changes anything: the handler answers
// GET and HEAD only, and a Host offers no method that writes.
//
// Who may look: a request with HTTP basic auth is served as the ACL user it
// names, when the password is accepted and the user may run INFO. A request
// without credentials is served only from a loopback address, as the
// default user, and only while that user needs no password and may run
// INFO. So a console bound beyond loopback is usable only with a password.
// Key names (hot keys, slow log arguments, discovered prefixes) reach a
// user only when one of its selectors lets it read those keys.
package console

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net"
	"net/http"
)

// Host is what the console reads from the server.
type Host interface {
	// Authenticate returns the ACL user named user as a viewer when pass
	// is its password and it may run INFO.
	Authenticate(user, pass string) (Viewer, bool)
	// Anonymous returns the viewer a request without credentials is served
	// as (the default user), when it needs no password and may run INFO.
	Anonymous() (Viewer, bool)
	// Snapshot returns the server's figures as of now, key names unfiltered.
	Snapshot() Snapshot
}

// Viewer is the ACL user a request is served as.
type Viewer interface {
	MayRead(key []byte) bool
}

// Snapshot is what /api/state serves.
type Snapshot struct {
	Server     map[string]string `json:"server"`      // INFO server's fields the page shows
	Memory     map[string]string `json:"memory"`      // INFO memory's fields
	Namespaces []Namespace       `json:"namespaces"`  // declared ones, then the default one
	Discovery  *Discovery        `json:"discovery"`   // nil when namespace-discovery is off
	HotKeys    *HotKeys          `json:"hotkeys"`     // nil before HOTKEYS START
	SlowLog    []SlowEntry       `json:"slowlog"`     // newest first
	Commands   []CommandStat     `json:"commands"`    // INFO commandstats and latencystats
	Role       Role              `json:"role"`        // replication and cluster
	HiddenKeys int               `json:"hidden_keys"` // key names this viewer may not read
}

// Namespace is a declared namespace (or the default one) with its policy
// and the figures NAMESPACE STATS reports.
type Namespace struct {
	Name    string           `json:"name"`
	Match   string           `json:"match"` // "prefix p" or "pattern p", empty for the default
	Policy  string           `json:"policy"`
	Quota   Quota            `json:"quota"`
	Figures map[string]int64 `json:"figures"`
}

// Quota is a namespace's limits (0: none) and what happens at them.
type Quota struct {
	MaxKeys   int64  `json:"maxkeys"`
	MaxMemory int64  `json:"maxmemory"`
	Evict     string `json:"evict"`
	Protected bool   `json:"protected"`
}

// Discovery is NAMESPACE DISCOVER's top prefixes at each depth kept.
type Discovery struct {
	Delimiter string     `json:"delimiter"`
	Depths    [][]Prefix `json:"depths"` // Depths[d-1]: depth d, by bytes
}

// Prefix is a discovered prefix with its figures and their error bounds.
type Prefix struct {
	Name    string           `json:"name"`
	Depth   int              `json:"depth"`
	Figures map[string]int64 `json:"figures"`
	Error   map[string]int64 `json:"error"`
}

// HotKeys is the current or last HOTKEYS session's heaviest keys.
type HotKeys struct {
	Active bool     `json:"active"`
	ByCPU  []HotKey `json:"by_cpu_us"`
	ByNet  []HotKey `json:"by_net_bytes"`
}

// HotKey is a key and what it was charged.
type HotKey struct {
	Key   string `json:"key"`
	Count uint64 `json:"count"`
}

// SlowEntry is a SLOWLOG entry; Keys are the key arguments among Args,
// which the console hides (keeping the command name) unless the viewer
// may read them all.
type SlowEntry struct {
	ID         int64    `json:"id"`
	Unix       int64    `json:"unix"`
	Micros     int64    `json:"micros"`
	Args       []string `json:"args"`
	Keys       []string `json:"-"`
	Hidden     bool     `json:"hidden,omitempty"`
	Client     string   `json:"client"`
	ClientName string   `json:"client_name"`
}

// CommandStat is one command's INFO commandstats and latencystats fields.
type CommandStat struct {
	Name   string            `json:"name"`
	Fields map[string]string `json:"fields"`
}

// Role is the node's place in replication and in a cluster.
type Role struct {
	Replication map[string]string `json:"replication"` // INFO replication's fields
	Cluster     bool              `json:"cluster"`
	Nodes       []string          `json:"nodes"` // CLUSTER NODES lines
}

//go:embed assets
var assets embed.FS

// Handler serves the page and its JSON at the root of its mount point.
func Handler(h Host) http.Handler {
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.FileServer(http.FS(static))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "the console is read-only", http.StatusMethodNotAllowed)
			return
		}
		v, ok := viewer(h, r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Basic realm="keyhive console", charset="UTF-8"`)
			http.Error(w, "authentication required: an ACL user that may run INFO", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Security-Policy", "default-src 'self'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-store")
		if r.URL.Path == "/api/state" {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(Filter(h.Snapshot(), v))
			return
		}
		files.ServeHTTP(w, r)
	})
}

// viewer is who r is served as: the basic-auth user, or without
// credentials the anonymous one, from loopback only.
func viewer(h Host, r *http.Request) (Viewer, bool) {
	if user, pass, ok := r.BasicAuth(); ok {
		return h.Authenticate(user, pass)
	}
	if !Loopback(r.RemoteAddr) {
		return nil, false
	}
	return h.Anonymous()
}

// Loopback reports whether a request's remote address is a loopback one.
func Loopback(remoteAddr string) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Filter removes from s the key names v may not read: hot keys are
// dropped, a slow log entry touching such a key keeps its command name
// only, and a discovered prefix (a part of key names) is shown only when v
// may read a key equal to it, which a pattern such as "user:*" grants.
// Declared namespaces are configuration, not key names: they stay.
// HiddenKeys counts what was removed.
func Filter(s Snapshot, v Viewer) Snapshot {
	if s.Discovery != nil {
		d := *s.Discovery
		d.Depths = make([][]Prefix, len(s.Discovery.Depths))
		for i, level := range s.Discovery.Depths {
			d.Depths[i] = []Prefix{}
			for _, p := range level {
				if v.MayRead([]byte(p.Name)) {
					d.Depths[i] = append(d.Depths[i], p)
				} else {
					s.HiddenKeys++
				}
			}
		}
		s.Discovery = &d
	}
	if s.HotKeys != nil {
		hk := *s.HotKeys
		hk.ByCPU = readable(hk.ByCPU, v, &s.HiddenKeys)
		hk.ByNet = readable(hk.ByNet, v, &s.HiddenKeys)
		s.HotKeys = &hk
	}
	log := make([]SlowEntry, len(s.SlowLog))
	for i, e := range s.SlowLog {
		for _, k := range e.Keys {
			if !v.MayRead([]byte(k)) {
				e.Args, e.Hidden = e.Args[:min(1, len(e.Args))], true
				s.HiddenKeys++
				break
			}
		}
		log[i] = e
	}
	s.SlowLog = log
	return s
}

func readable(keys []HotKey, v Viewer, hidden *int) []HotKey {
	out := []HotKey{}
	for _, k := range keys {
		if v.MayRead([]byte(k.Key)) {
			out = append(out, k)
		} else {
			*hidden++
		}
	}
	return out
}
