package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/keyhive/keyhive/internal/version"
)

func TestHumanMemory(t *testing.T) {
	for _, c := range []struct {
		in   uint64
		want string
	}{{0, "0"}, {1, "1"}, {1024, "1kb"}, {1025, "1025"}, {3 << 20, "3mb"}, {1 << 30, "1gb"}, {3000, "3000"}} {
		if got := humanMemory(c.in); got != c.want {
			t.Errorf("humanMemory(%d) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestParseInt(t *testing.T) {
	good := map[string]int64{"0": 0, "5": 5, "-5": -5, "9223372036854775807": 1<<63 - 1, "-9223372036854775808": -1 << 63}
	for s, want := range good {
		if got, ok := parseInt(s); !ok || got != want {
			t.Errorf("parseInt(%q) = %d, %v", s, got, ok)
		}
	}
	for _, s := range []string{"", "-", "05", "-0", "+5", " 5", "5 ", "5k", "9223372036854775808", "1e3", "00"} {
		if _, ok := parseInt(s); ok {
			t.Errorf("parseInt(%q) accepted", s)
		}
	}
}

func TestSplitArgs(t *testing.T) {
	cases := []struct {
		in   string
		want []string
		err  bool
	}{
		{"", nil, false},
		{"   ", nil, false},
		{"a b  c", []string{"a", "b", "c"}, false},
		{"\ta\tb\r", []string{"a", "b"}, false},
		{`a "b c" d`, []string{"a", "b c", "d"}, false},
		{`""`, []string{""}, false},
		{`''`, []string{""}, false},
		{`"\n\r\t\b\a\\\"\q"`, []string{"\n\r\t\b\a\\\"q"}, false},
		{`"\x41\x4a\x4B\xzz"`, []string{"AJKxzz"}, false},
		{`'it\'s' 'a\nb'`, []string{"it's", `a\nb`}, false},
		{`ab"c d"`, []string{"abc d"}, false},
		{`"abc"def`, nil, true},
		{`'abc'def`, nil, true},
		{`"abc`, nil, true},
		{`'abc`, nil, true},
		{`"abc\"`, nil, true},
		{`"\x4"`, []string{"x4"}, false},
	}
	for _, c := range cases {
		got, err := splitArgs(c.in)
		if (err != nil) != c.err || !reflect.DeepEqual(got, c.want) {
			t.Errorf("splitArgs(%q) = %q, %v; want %q, err=%v", c.in, got, err, c.want, c.err)
		}
	}
	// repr must read back as the same single argument.
	for _, s := range []string{"", "plain", "a b", `q"uote`, "nl\n", "\x00\xff\x7f", `back\slash`, "it's"} {
		got, err := splitArgs(repr(s))
		if err != nil || len(got) != 1 || got[0] != s {
			t.Errorf("repr(%q) = %s reads back as %q, %v", s, repr(s), got, err)
		}
		got, err = splitArgs(quoteIfNeeded(s))
		if err != nil || len(got) != 1 || got[0] != s {
			t.Errorf("quoteIfNeeded(%q) reads back as %q, %v", s, got, err)
		}
	}
}

func mustParse(t *testing.T, text string) *Config {
	t.Helper()
	c, err := Parse(text)
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	return c
}

func get1(t *testing.T, c *Config, name string) string {
	t.Helper()
	v, ok := c.Value(name)
	if !ok {
		t.Fatalf("no directive %s", name)
	}
	return v
}

func TestParseFile(t *testing.T) {
	c := mustParse(t, `
# comment
   # indented comment
PORT 7000
port 7001
MaxMemory 2GB
maxmemory-policy ALLKEYS-LRU
appendonly YES
requirepass "p w\x21"
masterauth 'it\'s'
save 900 1
save 300 10
bind 127.0.0.1 -::1
hash-max-ziplist-entries 100
client-output-buffer-limit pubsub 1mb 2kb 3
notify-keyspace-events KEA
list-max-ziplist-entries 5
rename-command FLUSHALL ""
rename-command CONFIG cfg
user alice on >pw ~* +@all
unixsocketperm 700
`)
	checks := map[string]string{
		"port": "7001", "maxmemory": "2147483648", "maxmemory-policy": "allkeys-lru",
		"appendonly": "yes", "requirepass": "p w!", "masterauth": "it's",
		"save": "900 1 300 10", "bind": "127.0.0.1 -::1",
		"hash-max-listpack-entries": "100", "hash-max-ziplist-entries": "100",
		"client-output-buffer-limit": "normal 0 0 0 slave 268435456 67108864 60 pubsub 1048576 2048 3",
		"notify-keyspace-events":     "AKE", "unixsocketperm": "700",
	}
	for k, want := range checks {
		if got := get1(t, c, k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if c.Port() != 7001 || c.MaxMemory() != 2<<30 || !c.AppendOnly() || c.MaxMemoryPolicy() != "allkeys-lru" ||
		c.UnixSocketPerm() != 0o700 || c.RequirePass() != "p w!" {
		t.Errorf("typed getters disagree with Get")
	}
	if !reflect.DeepEqual(c.Save(), [][2]int64{{900, 1}, {300, 10}}) {
		t.Errorf("Save() = %v", c.Save())
	}
	if !reflect.DeepEqual(c.Bind(), []string{"127.0.0.1", "-::1"}) {
		t.Errorf("Bind() = %v", c.Bind())
	}
	if got := c.ClientOutputBufferLimit(ClassPubSub); got != (OutputBufferLimit{1 << 20, 2048, 3}) {
		t.Errorf("pubsub limit = %+v", got)
	}
	if f := c.NotifyKeyspaceEvents(); f&EventKeyspace == 0 || f&EventKeyevent == 0 || f&EventAll != EventAll || f&EventKeyMiss != 0 {
		t.Errorf("keyspace events = %v", f)
	}
	if want := [][2]string{{"FLUSHALL", ""}, {"CONFIG", "cfg"}}; !reflect.DeepEqual(c.RenamedCommands(), want) {
		t.Errorf("renames = %q", c.RenamedCommands())
	}
	if want := [][]string{{"alice", "on", ">pw", "~*", "+@all"}}; !reflect.DeepEqual(c.Users(), want) {
		t.Errorf("users = %q", c.Users())
	}

	// save "" disables, a later save starts again from nothing.
	if got := get1(t, mustParse(t, `save ""`), "save"); got != "" {
		t.Errorf(`save "" gives %q`, got)
	}
	if got := mustParse(t, "save\n").Save(); len(got) != 0 {
		t.Errorf("bare save gives %v", got)
	}
	// As in Redis: save "" empties the list, a bare save adds nothing.
	if got := get1(t, mustParse(t, "save 1 1\nsave \"\"\nsave 2 2\n"), "save"); got != "2 2" {
		t.Errorf("save reset gives %q", got)
	}
	if got := get1(t, mustParse(t, "save 1 1\nsave\n"), "save"); got != "1 1" {
		t.Errorf("bare save after a save gives %q", got)
	}
	if got := get1(t, mustParse(t, "bind \"1.1.1.1 2.2.2.2\"\n"), "bind"); got != "1.1.1.1 2.2.2.2" {
		t.Errorf("quoted multi-word bind gives %q", got)
	}
}

func TestParseErrors(t *testing.T) {
	cases := map[string]string{
		"port abc":                              "argument couldn't be parsed into an integer",
		"foo bar":                               "Bad directive or wrong number of arguments",
		"port 1 2":                              "wrong number of arguments",
		`port "1"x`:                             "Unbalanced quotes in configuration line",
		"maxmemory 1tb":                         "argument must be a memory value",
		"appendonly maybe":                      "argument must be 'yes' or 'no'",
		"loglevel loud":                         "argument(s) must be one of the following: debug, verbose, notice, warning",
		"save 1":                                "Invalid save parameters",
		"loadmodule /x.so":                      "loadmodule is not supported: this server cannot load Redis modules",
		"port 65536":                            "argument must be between 0 and 65535 inclusive",
		"unixsocketperm 1000":                   "argument must be between 0 and 777 inclusive",
		"client-output-buffer-limit normal 1 2": "Wrong number of arguments in buffer limit configuration.",
	}
	for text, reason := range cases {
		_, err := Parse("# first\n\n" + text + "\n")
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%q: error %v is not a ParseError", text, err)
			continue
		}
		if pe.Reason != reason || pe.Line != 3 || pe.Text != text {
			t.Errorf("%q: got %+v, want reason %q at line 3", text, pe, reason)
		}
		want := "*** FATAL CONFIG FILE ERROR (Redis " + version.Redis + ") ***\nReading the configuration file, at line 3\n>>> '" + text + "'\n" + reason
		if err.Error() != want {
			t.Errorf("%q: Error() = %q", text, err.Error())
		}
	}
}

func TestInclude(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("b.conf", "maxclients 200\ntimeout 7\n")
	a := write("a.conf", "maxclients 100\ninclude "+filepath.Join(dir, "b.conf")+"\nhz 20\n")
	main := write("main.conf", "timeout 1\ninclude "+a+"\nmaxclients 300\n")
	c, err := FromArgs([]string{main})
	if err != nil {
		t.Fatal(err)
	}
	// Later lines override earlier ones, wherever they come from.
	if c.MaxClients() != 300 || c.Timeout() != 7 || c.Hz() != 20 {
		t.Errorf("maxclients %d timeout %d hz %d", c.MaxClients(), c.Timeout(), c.Hz())
	}
	if c.ConfigFile() != main {
		t.Errorf("ConfigFile() = %q", c.ConfigFile())
	}

	// Include loops are refused instead of recursing forever.
	loop1 := filepath.Join(dir, "loop1.conf")
	loop2 := write("loop2.conf", "include "+loop1+"\n")
	write("loop1.conf", "port 1\ninclude "+loop2+"\n")
	_, err = FromArgs([]string{loop1})
	var pe *ParseError
	if !errors.As(err, &pe) || !strings.Contains(pe.Reason, "include loop") || pe.File != loop2 || pe.Line != 1 {
		t.Errorf("include loop: %v", err)
	}
	self := write("self.conf", "include self.conf\n")
	if _, err := Parse("dir " + dir + "\ninclude " + self); err == nil || !strings.Contains(err.Error(), "include loop") {
		t.Errorf("self include: %v", err)
	}

	// A missing file gives Redis's message; the line inside an include is
	// reported against that file.
	_, err = Parse("include /nonexistent/x.conf")
	if err == nil || err.Error() != "Fatal error, can't open config file '/nonexistent/x.conf': No such file or directory" {
		t.Errorf("missing include: %v", err)
	}
	bad := write("bad.conf", "# c\nport x\n")
	_, err = Parse("include " + bad)
	if !errors.As(err, &pe) || pe.File != bad || pe.Line != 2 || pe.Text != "port x" {
		t.Errorf("error in include: %v", err)
	}

	// Relative includes follow an earlier dir, as Redis's chdir does; globs
	// load every match in order and may match nothing.
	write("g1.conf", "maxclients 11\n")
	write("g2.conf", "maxclients 12\n")
	c = mustParse(t, "dir "+dir+"\ninclude g*.conf\ninclude nomatch*.conf\n")
	if c.MaxClients() != 12 || c.Dir() != dir {
		t.Errorf("glob include: maxclients %d dir %q", c.MaxClients(), c.Dir())
	}
	if _, err := Parse("include /dev/zero"); err == nil {
		t.Errorf("include of a device accepted")
	}
}

func TestFromArgs(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "r.conf")
	os.WriteFile(f, []byte("port 7000\nsave 900 1\n"), 0o644)
	c, err := fromArgs([]string{f, "--port", "7001", "--save", "60", "5", "--bind", "127.0.0.1", "::1",
		"--requirepass", "--not-an-option", "--maxmemory 1mb"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Port() != 7001 || get1(t, c, "save") != "900 1 60 5" || get1(t, c, "bind") != "127.0.0.1 ::1" ||
		c.RequirePass() != "--not-an-option" || c.MaxMemory() != 1<<20 {
		t.Errorf("port %d save %q bind %q requirepass %q maxmemory %d", c.Port(), get1(t, c, "save"),
			get1(t, c, "bind"), c.RequirePass(), c.MaxMemory())
	}
	for _, args := range [][]string{{"--save"}, {"--save", "--port", "1"}} {
		c, err := fromArgs(args, nil)
		if err != nil || len(c.Save()) != 0 {
			t.Errorf("%q: save %v, %v", args, c.Save(), err)
		}
	}
	c, err = fromArgs([]string{"-", "--hz", "30"}, strings.NewReader("port 7002\nhz 20\n"))
	if err != nil || c.Port() != 7002 || c.Hz() != 30 || c.ConfigFile() != "" {
		t.Errorf("stdin config: %v", err)
	}
	if _, err := FromArgs([]string{filepath.Join(dir, "missing.conf")}); err == nil ||
		!strings.Contains(err.Error(), "can't open config file") {
		t.Errorf("missing config file: %v", err)
	}
	if c, err := FromArgs(nil); err != nil || c.Port() != 6379 || c.ConfigFile() != "" {
		t.Errorf("no args: %v", err)
	}
}

// TestPersistent: a configuration asks for files on disk with a config file
// (or stdin) or a directive saying where or turning writing on; save "" and
// appendonly no do neither.
func TestPersistent(t *testing.T) {
	f := filepath.Join(t.TempDir(), "empty.conf")
	os.WriteFile(f, nil, 0o644)
	for _, c := range []struct {
		args  []string
		stdin string
		want  bool
	}{
		{nil, "", false},
		{[]string{"--port", "0", "--bind", "127.0.0.1"}, "", false},
		{[]string{"--port", "0", "--save", ""}, "", false},
		{[]string{"--save"}, "", false},
		{[]string{"--save", "60 1", "--save", ""}, "", false},
		{[]string{"--save", "60 1"}, "", true},
		{[]string{"--dir", "/tmp"}, "", true},
		{[]string{"--dbfilename", "x.rdb"}, "", true},
		{[]string{"--appendonly", "yes"}, "", true},
		{[]string{"--appendonly", "no"}, "", false},
		{[]string{"--save", "", "--appendonly", "no"}, "", false},
		{[]string{"--appendfilename", "x.aof"}, "", true},
		{[]string{"--appenddirname", "aof"}, "", true},
		{[]string{f, "--save", ""}, "", true},
		{[]string{"-"}, "port 1\n", true},
	} {
		cfg, err := fromArgs(c.args, strings.NewReader(c.stdin))
		if err != nil {
			t.Fatalf("%q: %v", c.args, err)
		}
		if cfg.Persistent() != c.want {
			t.Errorf("%q: Persistent() = %v, want %v", c.args, cfg.Persistent(), c.want)
		}
	}
	if Default().Persistent() {
		t.Error("Default().Persistent() = true")
	}
}

func TestDefaults(t *testing.T) {
	c := Default()
	checks := map[string]string{
		"maxmemory": "0", "save": "3600 1 300 100 60 10000", "bind": "127.0.0.1 -::1", "port": "6379",
		"client-output-buffer-limit": "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
		"proto-max-bulk-len":         "536870912", "appendonly": "no", "databases": "16",
		"notify-keyspace-events": "", "latency-tracking-info-percentiles": "50 99 99.9",
		"shutdown-on-sigint": "default", "replicaof": "", "slaveof": "", "unixsocketperm": "0",
		"lua-time-limit": "5000", "enable-debug-command": "no",
	}
	for k, want := range checks {
		if got := get1(t, c, k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	if c.Databases() != 16 || c.Hz() != 10 || c.MaxClients() != 10000 || c.ProtectedMode() != true ||
		c.EnableDebugCommand() != "no" || c.MaxMemoryPolicy() != "noeviction" || c.MaxMemorySamples() != 5 ||
		c.LogLevel() != "notice" || c.LogFile() != "" || c.DBFilename() != "dump.rdb" ||
		c.ProtoMaxBulkLen() != 512<<20 || c.ClientQueryBufferLimit() != 1<<30 || c.TCPKeepAlive() != 300 {
		t.Errorf("typed defaults wrong")
	}
	wd, _ := os.Getwd()
	if real, err := filepath.EvalSymlinks(wd); err == nil {
		wd = real
	}
	if c.Dir() != wd {
		t.Errorf("Dir() = %q, want %q", c.Dir(), wd)
	}
	// Every directive has a default that formats, and aliases mirror names.
	got := c.Get("*")
	if len(got)%2 != 0 || len(got) < 2*len(specs) {
		t.Errorf("Get(*) returned %d items", len(got))
	}
	if v := c.Get("rdb-key-save-delay"); len(v) != 2 {
		t.Errorf("hidden directive not reachable by exact name")
	}
	for _, p := range c.Get("rdb*") {
		if p == "rdb-key-save-delay" {
			t.Errorf("hidden directive matched a pattern")
		}
	}
}

func TestSet(t *testing.T) {
	c := Default()
	errText := func(err error) string {
		if err == nil {
			return "OK"
		}
		return err.Error()
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"foo", "bar"}, "ERR Unknown option or number of arguments for CONFIG SET - 'foo'"},
		{[]string{"maxmemory", "abc"}, "ERR CONFIG SET failed (possibly related to argument 'maxmemory') - argument must be a memory value"},
		{[]string{"databases", "3"}, "ERR CONFIG SET failed (possibly related to argument 'databases') - can't set immutable config"},
		{[]string{"maxmemory", "1", "MaxMemory", "2"}, "ERR CONFIG SET failed (possibly related to argument 'MaxMemory') - duplicate parameter"},
		{[]string{"port", "70000"}, "ERR CONFIG SET failed (possibly related to argument 'port') - argument must be between 0 and 65535 inclusive"},
		{[]string{"dir", "/"}, "ERR CONFIG SET failed (possibly related to argument 'dir') - can't set protected config"},
		{[]string{"maxmemory"}, "ERR wrong number of arguments for 'config|set' command"},
		{[]string{"maxmemory", "1", "hz"}, "ERR syntax error"},
		{nil, "ERR wrong number of arguments for 'config|set' command"},
		{[]string{"MAXMEMORY", "1gb", "hz", "1000"}, "OK"},
	}
	for _, tc := range cases {
		if got := errText(c.Set(tc.args)); got != tc.want {
			t.Errorf("Set(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
	if c.MaxMemory() != 1<<30 || c.Hz() != 500 {
		t.Errorf("after set: maxmemory %d hz %d", c.MaxMemory(), c.Hz())
	}

	// All or nothing: a bad later value leaves the earlier ones untouched.
	err := c.Set([]string{"maxmemory", "5mb", "maxmemory-policy", "allkeys-lru", "port", "abc"})
	if err == nil || c.MaxMemory() != 1<<30 || c.MaxMemoryPolicy() != "noeviction" {
		t.Errorf("partial set: %v, maxmemory %d policy %s", err, c.MaxMemory(), c.MaxMemoryPolicy())
	}

	// Protected directives follow enable-protected-configs.
	c2, _ := Parse("enable-protected-configs local")
	if err := c2.Set([]string{"dbfilename", "x.rdb"}); err == nil {
		t.Errorf("protected set from remote client accepted")
	}
	if err := c2.SetLocal([]string{"dbfilename", "x.rdb"}); err != nil || c2.DBFilename() != "x.rdb" {
		t.Errorf("protected set from local client: %v", err)
	}
}

func TestHooks(t *testing.T) {
	c := Default()
	var changed []string
	c.OnChange("maxmemory", func() { changed = append(changed, "maxmemory") })
	c.OnChange("lua-time-limit", func() { changed = append(changed, "busy") }) // alias
	applied := 0
	c.OnApply("timeout", func() error { applied++; return nil })
	c.OnApply("port", func() error {
		if c.Port() == 1 {
			return errors.New("Unable to listen on this port")
		}
		return nil
	})

	if err := c.Set([]string{"maxmemory", "1mb", "busy-reply-threshold", "10"}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(changed, []string{"maxmemory", "busy"}) {
		t.Errorf("OnChange calls %v", changed)
	}

	changed = nil
	err := c.Set([]string{"maxmemory", "2mb", "timeout", "5", "port", "1"})
	want := "ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port"
	if err == nil || err.Error() != want {
		t.Errorf("failing apply: %v", err)
	}
	// Rolled back, the timeout hook ran again to restore, no change hooks.
	if c.MaxMemory() != 1<<20 || c.Timeout() != 0 || c.Port() != 6379 || applied != 2 || changed != nil {
		t.Errorf("after failed apply: maxmemory %d timeout %d port %d applied %d changed %v",
			c.MaxMemory(), c.Timeout(), c.Port(), applied, changed)
	}

	defer func() {
		if recover() == nil {
			t.Errorf("OnChange of an unknown directive did not panic")
		}
	}()
	c.OnChange("no-such-directive", func() {})
}

func TestRewriteRoundTrip(t *testing.T) {
	dir := t.TempDir()
	inc := filepath.Join(dir, "inc.conf")
	os.WriteFile(inc, []byte("maxclients 100\n"), 0o644)
	f := filepath.Join(dir, "redis.conf")
	orig := "# top comment\nport 7000\n   # indented\n\n\n" +
		"hash-max-ziplist-entries 100\nsave 900 1\nsave 300 10\ninclude " + inc + "\n" +
		"rename-command FLUSHALL \"\"\nMaxMemory 10mb\nbind 127.0.0.1\n" +
		"client-output-buffer-limit pubsub 32mb 8mb 60\nuser alice on >pw\n"
	os.WriteFile(f, []byte(orig), 0o600)
	c, err := FromArgs([]string{f, "--tcp-keepalive", "100", "--dir", dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range [][]string{
		{"maxmemory", "1gb"}, {"save", "60 5"}, {"hash-max-listpack-entries", "512"},
		{"client-output-buffer-limit", "normal 1mb 1025 3"}, {"maxmemory-clients", "5%"},
		{"requirepass", "p w\"x"}, {"notify-keyspace-events", "KEA"}, {"appendfsync", "always"},
	} {
		if err := c.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Rewrite(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(f)
	want := "# top comment\nport 7000\n# indented\n\n" +
		"hash-max-listpack-entries 512\nsave 60 5\n\ninclude " + inc + "\n" +
		"rename-command FLUSHALL \"\"\nmaxmemory 1gb\nbind 127.0.0.1\n" +
		"client-output-buffer-limit normal 1mb 1025 3\nuser alice on >pw\n" +
		"# Generated by CONFIG REWRITE\n" +
		"appendfsync always\n" +
		"dir \"" + dir + "\"\n" +
		"maxclients 100\n" +
		"maxmemory-clients 5%\n" +
		"notify-keyspace-events \"AKE\"\n" +
		"requirepass \"p w\\\"x\"\n" +
		"tcp-keepalive 100\n"
	if string(got) != want {
		t.Errorf("rewritten file:\n%s\nwant:\n%s", got, want)
	}
	if st, _ := os.Stat(f); st.Mode().Perm() != 0o600 {
		t.Errorf("file mode changed to %v", st.Mode())
	}

	// Loading the result gives the same configuration, and rewriting again
	// changes nothing.
	c2, err := FromArgs([]string{f})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := c.Get("*"), c2.Get("*"); !reflect.DeepEqual(a, b) {
		t.Errorf("reloaded configuration differs")
	}
	if err := c2.Rewrite(); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(f)
	if string(again) != string(got) {
		t.Errorf("second rewrite changed the file:\n%s", again)
	}

	// Setting a value back to its default keeps the line (now default), and
	// the file may not exist yet.
	if err := Default().Rewrite(); err == nil || err.Error() != "ERR The server is running without a config file" {
		t.Errorf("rewrite without file: %v", err)
	}
	os.Remove(f)
	if err := c2.Rewrite(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(f); !strings.HasPrefix(string(data), rewriteSignature+"\n") {
		t.Errorf("rewrite of a removed file:\n%s", data)
	}
}

func TestGettersDoNotAllocate(t *testing.T) {
	c := Default()
	n := testing.AllocsPerRun(100, func() {
		_ = c.Port() + c.Hz() + c.MaxClients() + c.Timeout() + c.Databases()
		_ = c.MaxMemory() + c.ProtoMaxBulkLen() + c.ClientQueryBufferLimit()
		_ = c.MaxMemoryPolicy() + c.EnableDebugCommand() + c.RequirePass() + c.LogLevel()
		_ = c.ProtectedMode() || c.LazyFreeLazyExpire() || c.AppendOnly()
		_ = len(c.Bind()) + len(c.Save())
		_ = c.NotifyKeyspaceEvents()
		_ = c.ClientOutputBufferLimit(ClassNormal)
	})
	if n != 0 {
		t.Errorf("getters allocate %v times per run", n)
	}
}

func TestConcurrentSetAndGet(t *testing.T) {
	c := Default()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if c.MaxMemory() < 0 || c.Hz() < 1 || c.MaxMemoryPolicy() == "" {
					t.Error("bad value observed")
					return
				}
				_ = c.Get("max*")
			}
		}()
	}
	for i := 0; i < 200; i++ {
		policy := "allkeys-lru"
		if i%2 == 0 {
			policy = "noeviction"
		}
		if err := c.Set([]string{"maxmemory", "1mb", "hz", "20", "maxmemory-policy", policy}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
}

// Every default is valid input for its own directive and formats back to
// itself, so the table cannot drift from the parser.
func TestRegistryConsistency(t *testing.T) {
	c := Default()
	for i := range specs {
		s := &specs[i]
		v := get1(t, c, s.name)
		if s.flags&(fImmutable|fProtected) != 0 || s.sp == spReplicaof {
			continue
		}
		if s.sp == spDir {
			v = c.Dir()
		}
		if err := c.Set([]string{s.name, v}); err != nil {
			t.Errorf("%s: setting its own value %q: %v", s.name, v, err)
		}
		if got := get1(t, c, s.name); got != v {
			t.Errorf("%s: %q became %q", s.name, v, got)
		}
		if s.alias != "" && get1(t, c, s.alias) != v {
			t.Errorf("alias %s differs from %s", s.alias, s.name)
		}
	}
}
