package console

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// prefixViewer may read the keys starting with prefix.
type prefixViewer string

func (p prefixViewer) MayRead(key []byte) bool { return strings.HasPrefix(string(key), string(p)) }

// fakeHost accepts one user, and anonymous requests when open.
type fakeHost struct{ open bool }

func (h fakeHost) Authenticate(user, pass string) (Viewer, bool) {
	return prefixViewer(""), user == "ops" && pass == "pw"
}
func (h fakeHost) Anonymous() (Viewer, bool) { return prefixViewer(""), h.open }
func (h fakeHost) Snapshot() Snapshot        { return Snapshot{} }

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:5000": true, "127.8.9.1:1": true, "[::1]:80": true,
		"10.0.0.2:5000": false, "[2001:db8::1]:80": false, "192.168.1.1:22": false,
		"[::ffff:127.0.0.1]:80": true, "garbage": false, "": false,
	} {
		if got := Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestHandlerAuth: without credentials only loopback requests are served,
// and only when the host admits anonymous viewers.
func TestHandlerAuth(t *testing.T) {
	for _, c := range []struct {
		open       bool
		remote     string
		user, pass string
		want       int
	}{
		{true, "127.0.0.1:1234", "", "", http.StatusOK},
		{true, "10.1.2.3:1234", "", "", http.StatusUnauthorized},
		{false, "127.0.0.1:1234", "", "", http.StatusUnauthorized},
		{true, "10.1.2.3:1234", "ops", "pw", http.StatusOK},
		{true, "10.1.2.3:1234", "ops", "no", http.StatusUnauthorized},
	} {
		req := httptest.NewRequest(http.MethodGet, "/api/state", nil)
		req.RemoteAddr = c.remote
		if c.user != "" {
			req.SetBasicAuth(c.user, c.pass)
		}
		rec := httptest.NewRecorder()
		Handler(fakeHost{c.open}).ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("%+v: %d, want %d", c, rec.Code, c.want)
		}
	}
}

func TestFilter(t *testing.T) {
	s := Snapshot{
		HotKeys: &HotKeys{ByCPU: []HotKey{{"pub:a", 3}, {"sec:b", 2}}},
		SlowLog: []SlowEntry{
			{Args: []string{"get", "sec:b"}, Keys: []string{"sec:b"}},
			{Args: []string{"get", "pub:a"}, Keys: []string{"pub:a"}},
		},
		Discovery: &Discovery{Depths: [][]Prefix{{{Name: "pub:"}, {Name: "sec:"}}}},
	}
	f := Filter(s, prefixViewer("pub:"))
	if len(f.HotKeys.ByCPU) != 1 || f.HotKeys.ByCPU[0].Key != "pub:a" {
		t.Errorf("hot keys %v", f.HotKeys.ByCPU)
	}
	if a := f.SlowLog[0].Args; len(a) != 1 || a[0] != "get" || !f.SlowLog[0].Hidden {
		t.Errorf("slow log entry on sec:b shows %v", a)
	}
	if len(f.SlowLog[1].Args) != 2 {
		t.Errorf("slow log entry on pub:a lost its arguments: %v", f.SlowLog[1].Args)
	}
	if d := f.Discovery.Depths[0]; len(d) != 1 || d[0].Name != "pub:" {
		t.Errorf("prefixes %v", d)
	}
	if f.HiddenKeys != 3 {
		t.Errorf("HiddenKeys %d, want 3", f.HiddenKeys)
	}
	if len(s.HotKeys.ByCPU) != 2 || len(s.SlowLog[0].Args) != 2 || len(s.Discovery.Depths[0]) != 2 {
		t.Error("Filter changed the snapshot it was given")
	}
}

// TestAssetsAreSelfContained: the page loads nothing from elsewhere (no
// CDN), and puts server text in as text, never as markup.
func TestAssetsAreSelfContained(t *testing.T) {
	for _, name := range []string{"assets/index.html", "assets/app.js", "assets/style.css"} {
		data, err := assets.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"http://", "https://", "innerHTML", "outerHTML", "document.write", "eval("} {
			if strings.Contains(string(data), bad) {
				t.Errorf("%s contains %q", name, bad)
			}
		}
	}
}
