package server

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/keyhive/keyhive/family"
	"github.com/keyhive/keyhive/glob"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/values"
)

// DEBUG: the subcommands tools and Redis's own test suite use, behind
// enable-debug-command. DEBUG takes the exclusive lock (its spec's allkeys
// flag): it reads or replaces the whole data set, or, like DEBUG SLEEP,
// stops the server as Redis's does. RELOAD and LOADAOF are in
// cmd_persistence.go.

func init() {
	bind("debug", debugCommand)
}

// debugState is what DEBUG switches at run time.
type debugState struct {
	// cronPaused is PAUSE-CRON: the cron skips its ticks.
	cronPaused atomic.Bool
	// scriptsCallDenied is SET-DISABLE-DENY-SCRIPTS: scripts may call
	// some commands flagged noscript (cmdspec.Spec.ScriptCallable).
	scriptsCallDenied atomic.Bool
}

func debugCommand(x *Ctx) {
	mode := x.s.cfg.EnableDebugCommand()
	if mode != "yes" && !(mode == "local" && x.c.isLocal()) {
		x.W.Error("ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.")
		return
	}
	sub, n := x.Args[1], len(x.Args)
	switch {
	case n == 2 && cstr.ArgIs(sub, "help"):
		debugHelp(x)
	case cstr.ArgIs(sub, "reload"):
		reloadCommand(x)
	case cstr.ArgIs(sub, "loadaof"):
		debugLoadAOF(x)
	case cstr.ArgIs(sub, "log") && n == 3:
		x.s.log.Printf("DEBUG LOG: %s", cstr.Bytes(x.Args[2]))
		x.W.OK()
	case cstr.ArgIs(sub, "object") && n == 3:
		debugObject(x)
	case cstr.ArgIs(sub, "listpack") && n == 3:
		debugListpack(x)
	case cstr.ArgIs(sub, "quicklist") && (n == 3 || n == 4):
		debugQuicklist(x)
	case cstr.ArgIs(sub, "populate") && n >= 3 && n <= 5:
		debugPopulate(x)
	case cstr.ArgIs(sub, "digest") && n == 2:
		d := values.DatasetDigest(x.s.ks)
		x.W.Simple(d.Hex())
	case cstr.ArgIs(sub, "digest-value"):
		x.W.Array(n - 2)
		for _, key := range x.Args[2:] {
			var d values.Digest
			// At time 0 nothing has expired: like Redis's, this digest
			// reads a logically expired key that is still there.
			if e, found := x.DB.Lookup(key, 0, false); found {
				d = values.ValueDigest(&e)
			}
			x.W.Simple(d.Hex())
		}
	case cstr.ArgIs(sub, "protocol") && n == 3:
		debugProtocol(x)
	case cstr.ArgIs(sub, "sleep") && n == 3:
		// Redis reads the value with strtod and no error check: junk sleeps 0.
		secs := cFloatPrefix(x.Args[2])
		if secs > 0 {
			time.Sleep(time.Duration(secs * float64(time.Second)))
		}
		x.W.OK()
	case cstr.ArgIs(sub, "set-active-expire") && n == 3:
		x.s.activeExpireEnabled.Store(cAtoi(x.Args[2]) != 0)
		x.W.OK()
	case cstr.ArgIs(sub, "quicklist-packed-threshold") && n == 3:
		// Keyhive's list nodes have no plain form, so the threshold Redis
		// would set is only checked.
		if size, ok := strnum.ParseMemory(string(cstr.Bytes(x.Args[2]))); !ok || size > 1<<32-1<<20 {
			x.W.Error("ERR argument must be a memory value bigger than 1 and smaller than 4gb")
			return
		}
		x.W.OK()
	case cstr.ArgIs(sub, "change-repl-id") && n == 2:
		x.s.repl.ChangeID()
		x.s.log.Printf("Changing replication IDs after receiving DEBUG change-repl-id")
		x.W.OK()
	case cstr.ArgIs(sub, "stringmatch-test") && n == 2:
		globFuzz()
		x.W.Simple("Apparently Redis did not crash: test passed")
	case cstr.ArgIs(sub, "set-disable-deny-scripts") && n == 3:
		x.s.debug.scriptsCallDenied.Store(cAtoi(x.Args[2]) != 0)
		x.W.OK()
	case cstr.ArgIs(sub, "pause-cron") && n == 3:
		x.s.debug.cronPaused.Store(cAtoi(x.Args[2]) != 0)
		x.W.OK()
	case cstr.ArgIs(sub, "replybuffer") && n == 4:
		debugReplyBuffer(x)
	default:
		x.W.Error(debugSyntaxError(sub))
	}
}

func debugSyntaxError(sub []byte) string {
	return "ERR unknown subcommand or wrong number of arguments for '" + string(cstr.Truncate(sub, 128)) + "'. Try DEBUG HELP."
}

func debugHelp(x *Ctx) {
	writeHelp(x, "DEBUG", []string{
		"CHANGE-REPL-ID",
		"    Change the replication IDs of the instance.",
		"    Dangerous: should be used only for testing the replication subsystem.",
		"DIGEST",
		"    Output a hex signature representing the current DB content.",
		"DIGEST-VALUE <key> [<key> ...]",
		"    Output a hex signature of the values of all the specified keys.",
		"LOG <message>",
		"    Write <message> to the server log.",
		"LOADAOF",
		"    Flush the AOF buffers on disk and reload the AOF in memory.",
		"OBJECT <key>",
		"    Show low level info about `key` and associated value.",
		"POPULATE <count> [<prefix>] [<size>]",
		"    Create <count> string keys named key:<num>. If <prefix> is specified then",
		"    it is used instead of the 'key' prefix. These are not propagated to",
		"    replicas. Cluster slots are not respected so keys not belonging to the",
		"    current node can be created in cluster mode.",
		"PROTOCOL <type>",
		"    Reply with a test value of the specified type. <type> can be: string,",
		"    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
		"    true, false.",
		"RELOAD [option ...]",
		"    Save the RDB on disk and reload it back to memory. Valid <option> values:",
		"    * MERGE: conflicting keys will be loaded from RDB.",
		"    * NOFLUSH: the existing database will not be removed before load, but",
		"      conflicting keys will generate an exception and kill the server.",
		"    * NOSAVE: the database will be loaded from an existing RDB file.",
		"    Examples:",
		"    * DEBUG RELOAD: verify that the server is able to persist, flush and reload",
		"      the database.",
		"    * DEBUG RELOAD NOSAVE: replace the current database with the contents of an",
		"      existing RDB file.",
		"    * DEBUG RELOAD NOSAVE NOFLUSH MERGE: add the contents of an existing RDB",
		"      file to the database.",
		"SET-ACTIVE-EXPIRE <0|1>",
		"    Setting it to 0 disables expiring keys in background when they are not",
		"    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
		"    default.",
		"QUICKLIST-PACKED-THRESHOLD <size>",
		"    Sets the threshold for elements to be inserted as plain vs packed nodes",
		"    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
		"SLEEP <seconds>",
		"    Stop the server for <seconds>. Decimals allowed.",
		"STRINGMATCH-TEST",
		"    Run a fuzz tester against the stringmatchlen() function.",
		"LISTPACK <key>",
		"    Show low level info about the listpack encoding of <key>.",
		"QUICKLIST <key> [<0|1>]",
		"    Show low level info about the quicklist encoding of <key>.",
		"    The optional argument (0 by default) sets the level of detail",
		"PAUSE-CRON <0|1>",
		"    Stop periodic cron job processing.",
		"REPLYBUFFER PEAK-RESET-TIME <NEVER||RESET|time>",
		"    Sets the time (in milliseconds) to wait between client reply buffer peak resets.",
		"    In case NEVER is provided the last observed peak will never be reset",
		"    In case RESET is provided the peak reset time will be restored to the default value",
		"REPLYBUFFER RESIZING <0|1>",
		"    Enable or disable the reply buffer resize cron job",
	})
}

// debugProtocol is DEBUG PROTOCOL <type>: a sample reply of each RESP3 type,
// written in RESP2 as Redis downgrades it.
func debugProtocol(x *Ctx) {
	w := x.W
	resp3 := w.Proto >= 3
	switch name := x.Args[2]; {
	case cstr.ArgIs(name, "string"):
		w.BulkString("Hello World")
	case cstr.ArgIs(name, "integer"):
		w.Int(12345)
	case cstr.ArgIs(name, "double"):
		w.Double(3.141)
	case cstr.ArgIs(name, "bignum"):
		const big = "1234567999999999999999999999999999999"
		if resp3 {
			w.B = append(w.B, "("+big+"\r\n"...)
		} else {
			w.BulkString(big)
		}
	case cstr.ArgIs(name, "null"):
		w.Null()
	case cstr.ArgIs(name, "array"), cstr.ArgIs(name, "set"):
		if cstr.ArgIs(name, "set") {
			w.Set(3)
		} else {
			w.Array(3)
		}
		for i := range 3 {
			w.Int(int64(i))
		}
	case cstr.ArgIs(name, "map"):
		w.Map(3)
		for i := range 3 {
			w.Int(int64(i))
			w.Bool(i == 1)
		}
	case cstr.ArgIs(name, "attrib"):
		if resp3 { // RESP2 has no attributes: only the reply that follows
			w.B = append(w.B, "|1\r\n"...)
			w.BulkString("key-popularity")
			w.Array(2)
			w.BulkString("key:123")
			w.Int(90)
		}
		w.BulkString("Some real reply following the attribute")
	case cstr.ArgIs(name, "push"):
		if !resp3 {
			w.Error("ERR RESP2 is not supported by this command")
			return
		}
		// The push follows the reply, as Redis 7.2+ sends pushes a
		// command makes after its reply.
		w.BulkString("Some real reply following the push reply")
		w.Push(2)
		w.BulkString("server-cpu-usage")
		w.Int(42)
	case cstr.ArgIs(name, "true"):
		w.Bool(true)
	case cstr.ArgIs(name, "false"):
		w.Bool(false)
	case cstr.ArgIs(name, "verbatim"):
		w.Verbatim("txt", "This is a verbatim\nstring")
	default:
		w.Error("ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false")
	}
}

// debugPopulate is DEBUG POPULATE count [prefix] [size]: string keys
// prefix:0 .. prefix:count-1 holding value:N (zero-padded or cut to size),
// skipping keys that exist. Like Redis's, they are not propagated.
func debugPopulate(x *Ctx) {
	count, ok := strnum.ParseInt(x.Args[2])
	if !ok || count < 0 {
		x.W.Error("ERR value is out of range, must be positive")
		return
	}
	var size int64
	if len(x.Args) == 5 {
		if size, ok = strnum.ParseInt(x.Args[4]); !ok || size < 0 {
			x.W.Error("ERR value is out of range, must be positive")
			return
		}
		// Redis would fail to allocate and abort; Keyhive refuses.
		if size > x.s.cfg.ProtoMaxBulkLen() {
			x.W.Error("ERR size is larger than proto-max-bulk-len")
			return
		}
	}
	prefix := []byte("key")
	if len(x.Args) >= 4 {
		prefix = cstr.Bytes(x.Args[3]) // Redis formats it with %s
	}
	var key, val []byte
	for i := range count {
		// Redis formats the key into a 128-byte buffer: longer names are cut.
		key = strconv.AppendInt(append(append(key[:0], prefix...), ':'), i, 10)
		key = key[:min(len(key), 127)]
		e, found := x.DB.Lookup(key, x.Now, true)
		if found {
			continue
		}
		val = strconv.AppendInt(append(val[:0], "value:"...), i, 10)
		if size == 0 {
			x.DB.Put(&e, key, keyspace.TypeString, values.StringEncoding(val), val, 0, x.Now)
			continue
		}
		enc := keyspace.EncEmbstr
		if size > 44 {
			enc = keyspace.EncRaw
		}
		copy(x.DB.PutSized(&e, key, keyspace.TypeString, enc, int(size), 0, x.Now), val)
	}
	x.W.OK()
}

// debugListpack is DEBUG LISTPACK key: the elements of a listpack-encoded
// value written to the log (the text is Keyhive's own).
func debugListpack(x *Ctx) {
	e, found := x.DB.Lookup(x.Args[2], x.Now, false)
	if !found {
		x.W.Error(errNoSuchKey)
		return
	}
	if e.Encoding() != keyspace.EncListpack {
		x.W.Error("ERR Not a listpack encoded object.")
		return
	}
	var b strings.Builder
	switch e.Type() {
	case keyspace.TypeHash:
		h := values.ViewHash(&e)
		fmt.Fprintf(&b, "listpack %q: hash, %d fields, %d bytes", e.Key(), h.Len(), len(e.Value()))
		h.Each(func(f, v []byte) { fmt.Fprintf(&b, "\n  %q => %q", f, v) })
	case keyspace.TypeZSet:
		z := values.ViewZSet(&e)
		fmt.Fprintf(&b, "listpack %q: sorted set, %d members, %d bytes", e.Key(), z.Len(), len(e.Value()))
		z.Each(0, z.Len(), false, func(m []byte, score float64) { fmt.Fprintf(&b, "\n  %q %v", m, score) })
	case keyspace.TypeSet:
		set := values.ViewSet(&e)
		fmt.Fprintf(&b, "listpack %q: set, %d members, %d bytes", e.Key(), set.Len(), len(e.Value()))
		set.Each(func(m []byte) { fmt.Fprintf(&b, "\n  %q", m) })
	}
	x.s.log.Print(b.String())
	x.W.Simple("Listpack structure printed on stdout")
}

// debugQuicklist is DEBUG QUICKLIST key [full]: a list's layout written to
// the log (the text is Keyhive's own), its elements too when full is set.
func debugQuicklist(x *Ctx) {
	e, found := x.DB.Lookup(x.Args[2], x.Now, false)
	if !found {
		x.W.Error(errNoSuchKey)
		return
	}
	if e.Encoding() != keyspace.EncQuicklist {
		x.W.Error("ERR Not a quicklist encoded object.")
		return
	}
	full := len(x.Args) == 4 && cAtoi(x.Args[3]) != 0
	l := values.ViewList(&e)
	var b strings.Builder
	form := "one node inline in its entry"
	if l.Obj != nil {
		form = "a chain of nodes"
	}
	fmt.Fprintf(&b, "quicklist %q: %d elements, %s", e.Key(), l.Len(), form)
	if full {
		l.Each(0, false, func(v []byte) bool {
			fmt.Fprintf(&b, "\n  %q", v)
			return true
		})
	}
	x.s.log.Print(b.String())
	x.W.Simple("Quicklist structure printed on stdout")
}

// debugReplyBuffer is DEBUG REPLYBUFFER PEAK-RESET-TIME <never|reset|ms>
// and RESIZING <0|1>. Keyhive's reply buffers grow as replies need and are
// given back after a large reply, with no peak tracking to tune: the
// arguments are checked as Redis checks them.
func debugReplyBuffer(x *Ctx) {
	switch opt, arg := x.Args[2], x.Args[3]; {
	case cstr.ArgIs(opt, "peak-reset-time"):
		if !cstr.ArgIs(arg, "never") && !cstr.ArgIs(arg, "reset") {
			if _, ok := strnum.ParseInt(arg); !ok {
				x.W.Error(errNotInt)
				return
			}
		}
	case cstr.ArgIs(opt, "resizing"):
	default:
		x.W.Error(debugSyntaxError(x.Args[1]))
		return
	}
	x.W.OK()
}

// globFuzz is STRINGMATCH-TEST: random patterns against random strings, as
// Redis's own fuzz test of its matcher does; it passes by not crashing.
func globFuzz() {
	var pat, str [32]byte
	for range 1_000_000 {
		p, s := pat[:rand.IntN(len(pat))], str[:rand.IntN(len(str))]
		for i := range p {
			p[i] = byte(rand.IntN(128))
		}
		for i := range s {
			s[i] = byte(rand.IntN(128))
		}
		glob.Match(p, s, false)
	}
}

// cAtoi is C's atoi as Redis's DEBUG switches read their argument: an
// optional sign and the digits that follow, after leading spaces; 0 when
// there are none. Out of range, strtol's saturated value cut to an int.
func cAtoi(b []byte) int32 {
	s := strings.TrimLeft(string(cstr.Bytes(b)), " \t\n\v\f\r")
	end := 0
	if end < len(s) && (s[end] == '-' || s[end] == '+') {
		end++
	}
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	n, _ := strconv.ParseInt(s[:end], 10, 64) // saturated out of range, as strtol
	return int32(n)
}

// cFloatPrefix reads the longest prefix of b that is a decimal number, after
// leading spaces, as C's strtod does; 0 when there is none.
func cFloatPrefix(b []byte) float64 {
	s := strings.TrimLeft(string(b), " \t\n\v\f\r")
	end := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || ((c == '-' || c == '+') && (i == 0 || s[i-1] == 'e' || s[i-1] == 'E'))) {
			break
		}
		end = i + 1
	}
	for ; end > 0; end-- {
		if f, err := strconv.ParseFloat(s[:end], 64); err == nil {
			return f
		}
	}
	return 0
}

// debugObject reports a key's internals in Redis's layout. The address is a
// stable per-key stand-in; serializedlength is the RDB length of a string.
func debugObject(x *Ctx) {
	e, found := x.DB.Lookup(x.Args[2], x.Now, false)
	if !found {
		x.W.Error(errNoSuchKey)
		return
	}
	refcount := int64(1)
	if family.IsSharedInteger(&e, x.s.SharedIntegerPolicy()) {
		refcount = family.SharedIntegerRefcount
	}
	x.W.Simple(fmt.Sprintf("Value at:0x%x refcount:%d encoding:%s serializedlength:%d lru:%d lru_seconds_idle:%d",
		keyspace.Slot(e.Key()), refcount, e.Encoding().Name(), rdbStringLen(e.Value()), e.Access(), values.IdleSeconds(e.Access(), x.Now)))
}

// rdbStringLen is the length of a string in an RDB file: small integers are
// stored in 1, 2 or 4 bytes after a type byte, other strings after a length.
func rdbStringLen(v []byte) int {
	if n, ok := strnum.ParseInt(v); ok && len(v) <= 11 {
		switch {
		case n >= -1<<7 && n < 1<<7:
			return 2
		case n >= -1<<15 && n < 1<<15:
			return 3
		case n >= -1<<31 && n < 1<<31:
			return 5
		}
	}
	switch l := len(v); {
	case l < 1<<6:
		return 1 + l
	case l < 1<<14:
		return 2 + l
	case l <= 1<<32-1:
		return 5 + l
	default:
		return 9 + len(v)
	}
}
