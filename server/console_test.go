//go:build unix

package server_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/keyhive/keyhive/console"
	"github.com/keyhive/keyhive/server"
)

// consoleGet fetches a console path, as user with pass when user is not
// empty, returning the status and body.
func consoleGet(t *testing.T, url, user, pass string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func consoleState(t *testing.T, srv *server.Server, user, pass string) console.Snapshot {
	t.Helper()
	code, body := consoleGet(t, srv.ConsoleURL()+"api/state", user, pass)
	if code != http.StatusOK {
		t.Fatalf("GET /api/state: %d %s", code, body)
	}
	var s console.Snapshot
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestConsoleStateMatchesNamespaceCommands checks that the console's JSON
// shows NAMESPACE STATS's and NAMESPACE DISCOVER's figures, and the
// namespaces' quotas.
func TestConsoleStateMatchesNamespaceCommands(t *testing.T) {
	ctx := context.Background()
	srv := startKeyhive(t, "--console-port", freePort(t), "--namespace-discovery", "yes")
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2})
	defer rdb.Close()
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "users", "PREFIX", "user:", "MAX-KEYS", 5000, "EVICT", "lru")
	nsDo(t, rdb, "NAMESPACE", "DEFINE", "sessions", "PREFIX", "sess:", "REQUIRE-TTL")
	pipe := rdb.Pipeline()
	for i := range 3000 {
		pipe.Set(ctx, fmt.Sprintf("user:%d:name", i), strings.Repeat("x", i%50), 0)
		pipe.Set(ctx, fmt.Sprintf("sess:%d", i), "s", 3600e9)
		pipe.HSet(ctx, fmt.Sprintf("cart:%d:items", i%700), "sku", i)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	rdb.Get(ctx, "user:1:name")

	state := consoleState(t, srv, "", "")
	stats := nsStats(t, rdb)
	if len(state.Namespaces) != len(stats) {
		t.Fatalf("console shows %d namespaces, NAMESPACE STATS %d", len(state.Namespaces), len(stats))
	}
	for _, n := range state.Namespaces {
		want, ok := stats[n.Name]
		if !ok {
			t.Fatalf("console shows namespace %q, NAMESPACE STATS does not", n.Name)
		}
		for f, v := range want {
			if n.Figures[f] != v {
				t.Errorf("namespace %s %s: console %d, NAMESPACE STATS %d", n.Name, f, n.Figures[f], v)
			}
		}
	}
	if q := state.Namespaces[0].Quota; state.Namespaces[0].Name != "users" || q.MaxKeys != 5000 || q.Evict != "lru" {
		t.Errorf("users' quota: %+v", state.Namespaces[0])
	}
	if p := state.Namespaces[1].Policy; !strings.Contains(p, "REQUIRE-TTL") {
		t.Errorf("sessions' policy %q lacks REQUIRE-TTL", p)
	}
	if state.Discovery == nil || len(state.Discovery.Depths) == 0 {
		t.Fatal("console shows no discovered prefixes")
	}
	for d, level := range state.Discovery.Depths {
		want := discovered(t, rdb, "DEPTH", d+1, "COUNT", len(level), "BY", "bytes")
		if len(want) != len(level) {
			t.Fatalf("depth %d: console shows %d prefixes, DISCOVER %d", d+1, len(level), len(want))
		}
		for i, p := range level {
			w := want[i]
			if p.Name != w["prefix"] {
				t.Fatalf("depth %d #%d: console %q, DISCOVER %q", d+1, i, p.Name, w["prefix"])
			}
			for f, v := range p.Figures {
				if w[f] != v || w["error."+f] != p.Error[f] {
					t.Errorf("prefix %q %s: console %d ± %d, DISCOVER %v ± %v", p.Name, f, v, p.Error[f], w[f], w["error."+f])
				}
			}
		}
	}
	if state.Role.Replication["role"] != "master" || state.Memory["used_memory"] == "" {
		t.Errorf("role %v, memory %v", state.Role.Replication, state.Memory)
	}
	if code, _ := consoleGet(t, srv.ConsoleURL(), "", ""); code != http.StatusOK {
		t.Errorf("GET /: %d", code)
	}
	resp, err := http.Post(srv.ConsoleURL()+"api/state", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405 (the console is read-only)", resp.StatusCode)
	}
}

// nonLoopbackIP returns an address of this machine's that is not a
// loopback one, "" when it has none.
func nonLoopbackIP() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	return ""
}

// TestConsoleRefusesRemoteWithoutPassword binds the console to a
// non-loopback address of the machine: a request from it without
// credentials is refused, one as an ACL user that may run INFO is served,
// a wrong password or a user without INFO is refused.
func TestConsoleRefusesRemoteWithoutPassword(t *testing.T) {
	ip := nonLoopbackIP()
	if ip == "" {
		t.Skip("no non-loopback address on this machine: console.Loopback's own test covers the check")
	}
	srv := startKeyhive(t, "--console-port", freePort(t), "--console-bind", ip)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2})
	defer rdb.Close()
	nsDo(t, rdb, "ACL", "SETUSER", "watcher", "on", ">s3cret", "+info")
	nsDo(t, rdb, "ACL", "SETUSER", "noinfo", "on", ">s3cret", "+get", "~*")
	url := srv.ConsoleURL() + "api/state"
	if !strings.Contains(url, ip) {
		t.Fatalf("console at %s, not on %s", url, ip)
	}
	for _, c := range []struct {
		user, pass string
		want       int
	}{
		{"", "", http.StatusUnauthorized},
		{"watcher", "wrong", http.StatusUnauthorized},
		{"noinfo", "s3cret", http.StatusUnauthorized},
		{"nobody", "s3cret", http.StatusUnauthorized},
		{"watcher", "s3cret", http.StatusOK},
	} {
		if code, body := consoleGet(t, url, c.user, c.pass); code != c.want {
			t.Errorf("from %s as %q/%q: %d %s, want %d", ip, c.user, c.pass, code, body, c.want)
		}
	}
}

// TestConsoleNeedsPasswordWhenDefaultUserDoes: with requirepass even a
// loopback request needs credentials.
func TestConsoleNeedsPasswordWhenDefaultUserDoes(t *testing.T) {
	srv := startKeyhive(t, "--console-port", freePort(t), "--requirepass", "pw")
	if code, _ := consoleGet(t, srv.ConsoleURL()+"api/state", "", ""); code != http.StatusUnauthorized {
		t.Errorf("without credentials: %d, want 401", code)
	}
	if code, _ := consoleGet(t, srv.ConsoleURL()+"api/state", "default", "pw"); code != http.StatusOK {
		t.Errorf("as default: %d, want 200", code)
	}
}

// TestConsoleHidesKeysFromUserWithoutReadRights: hot keys and slow log
// arguments naming keys a viewer may not read are not sent to it.
func TestConsoleHidesKeysFromUserWithoutReadRights(t *testing.T) {
	ctx := context.Background()
	srv := startKeyhive(t, "--console-port", freePort(t), "--slowlog-log-slower-than", "0")
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2})
	defer rdb.Close()
	nsDo(t, rdb, "ACL", "SETUSER", "public-viewer", "on", ">pw", "+info", "%R~public:*")
	nsDo(t, rdb, "ACL", "SETUSER", "keyless-viewer", "on", ">pw", "+info")
	nsDo(t, rdb, "HOTKEYS", "START", "METRICS", 1, "CPU")
	for i := range 50 {
		rdb.Set(ctx, "secret:token", i, 0)
		rdb.Get(ctx, "public:page")
		rdb.MSet(ctx, "public:a", 1, "secret:b", 2)
	}
	all := consoleState(t, srv, "", "")
	body, _ := json.Marshal(all)
	if !strings.Contains(string(body), "secret:token") || !strings.Contains(string(body), "public:page") {
		t.Fatalf("the default user sees every key name; got %s", body)
	}
	part := consoleState(t, srv, "public-viewer", "pw")
	body, _ = json.Marshal(part)
	if strings.Contains(string(body), "secret:") {
		t.Errorf("public-viewer sees a secret: key name: %s", body)
	}
	if !strings.Contains(string(body), "public:page") || part.HiddenKeys == 0 {
		t.Errorf("public-viewer should see public:page and a count of hidden names: %s", body)
	}
	none := consoleState(t, srv, "keyless-viewer", "pw")
	body, _ = json.Marshal(none)
	if strings.Contains(string(body), "secret:") || strings.Contains(string(body), "public:") {
		t.Errorf("keyless-viewer sees key names: %s", body)
	}
	if len(none.SlowLog) == 0 {
		t.Error("keyless-viewer should still see the slow log's commands")
	}
}

// TestConsoleOverTLS: with tls-port set the console speaks HTTPS with the
// server's certificate, and asks a browser for no client certificate.
func TestConsoleOverTLS(t *testing.T) {
	dir := tlsFiles(t)
	f := func(name string) string { return filepath.Join(dir, name) }
	srv := startKeyhive(t, "--port", freePort(t), "--tls-port", freePort(t), "--tls-cert-file", f("server.crt"),
		"--tls-key-file", f("server.key"), "--tls-ca-cert-file", f("ca.crt"), "--console-port", freePort(t))
	if !strings.HasPrefix(srv.ConsoleURL(), "https://") {
		t.Fatalf("console at %s, want https", srv.ConsoleURL())
	}
	pool := x509.NewCertPool()
	caPEM, err := os.ReadFile(f("ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool.AppendCertsFromPEM(caPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Get(srv.ConsoleURL() + "api/state")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET over TLS: %d", resp.StatusCode)
	}
	if resp, err := http.Get(strings.Replace(srv.ConsoleURL(), "https", "http", 1) + "api/state"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("the console answered plain HTTP while TLS is on")
		}
	}
}

// TestConsoleShowsReplicationPeers: a master's console lists its replica,
// the replica's names its master.
func TestConsoleShowsReplicationPeers(t *testing.T) {
	master := startKeyhive(t, "--console-port", freePort(t), "--repl-diskless-sync-delay", "0")
	replica := startKeyhive(t, "--console-port", freePort(t))
	host, port := hostPort(t, master.Addr())
	r := redis.NewClient(&redis.Options{Addr: replica.Addr(), Protocol: 2})
	defer r.Close()
	nsDo(t, r, "REPLICAOF", host, port)
	waitUntil(t, "the replica's link to come up", func() bool {
		return consoleState(t, replica, "", "").Role.Replication["master_link_status"] == "up"
	})
	rep := consoleState(t, replica, "", "").Role.Replication
	if rep["role"] != "slave" || rep["master_host"] != host || rep["master_port"] != port {
		t.Errorf("replica's console: %v", rep)
	}
	waitUntil(t, "the master to list its replica", func() bool {
		return strings.Contains(consoleState(t, master, "", "").Role.Replication["slave0"], "state=online")
	})
}
