package server_test

// FuzzEncodings sends random sequences of hash, set, sorted set and list
// commands to servers whose conversion thresholds differ (default, tiny, and
// zero: the large form from the first element), so the compact encodings
// (listpack, intset, the inline list node) and the large ones must give the
// same answers. TestEncodingSequences replays sequences against redis-server.

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/resp"
)

// encLimits are a server's conversion thresholds.
type encLimits struct {
	hashEntries, hashValue, setInts, zsetEntries, zsetValue, listSize int
	setEntries, setValue                                              int // a listpack set's (Redis 7.2)
}

var (
	encDefault = encLimits{512, 64, 512, 128, 64, -2, 128, 64}
	encTiny    = encLimits{4, 8, 4, 4, 8, 3, 4, 8}
	encLarge   = encLimits{0, 0, 0, 0, 0, 1, 0, 0}
)

// directives are the limits as command-line directives, without the
// listpack set ones, which redis-server 7.0 lacks (see sets70).
func (l encLimits) directives() []string {
	return []string{
		"--hash-max-listpack-entries", strconv.Itoa(l.hashEntries),
		"--hash-max-listpack-value", strconv.Itoa(l.hashValue),
		"--set-max-intset-entries", strconv.Itoa(l.setInts),
		"--zset-max-listpack-entries", strconv.Itoa(l.zsetEntries),
		"--zset-max-listpack-value", strconv.Itoa(l.zsetValue),
		"--list-max-listpack-size", strconv.Itoa(l.listSize),
	}
}

// keyhiveDirectives are all the limits, for Keyhive.
func (l encLimits) keyhiveDirectives() []string {
	return append(l.directives(),
		"--set-max-listpack-entries", strconv.Itoa(l.setEntries),
		"--set-max-listpack-value", strconv.Itoa(l.setValue))
}

// sets70 is l without listpack sets, as redis-server 7.0.15 keeps sets
// (and Keyhive with set-max-listpack-entries 0).
func (l encLimits) sets70() encLimits {
	l.setEntries = 0
	return l
}

// Set forms, in the order Redis converts them (never back).
const (
	setIntset = iota
	setListpack
	setHashtable
)

var setEncodings = []string{"intset", "listpack", "hashtable"}

// setForm is the smallest form a set's content fits.
func (l encLimits) setForm(k encKey) int {
	ints, short := true, true
	for _, s := range k.elems {
		if v, err := strconv.ParseInt(s, 10, 64); err != nil || strconv.FormatInt(v, 10) != s {
			ints = false
		}
		short = short && len(s) <= l.setValue
	}
	switch {
	case ints && len(k.elems) <= l.setInts:
		return setIntset
	case short && len(k.elems) <= l.setEntries:
		return setListpack
	}
	return setHashtable
}

// saddForm is the form SADD's member count n makes a set take at once
// (setTypeCreate, setTypeMaybeConvert): a new set's from its first member,
// a stored one's when n passes its form's limit.
func (l encLimits) saddForm(fresh bool, prev int, first string, n int) int {
	if !fresh {
		if prev == setIntset && n > l.setInts || prev == setListpack && n > l.setEntries {
			return setHashtable
		}
		return prev
	}
	v, err := strconv.ParseInt(first, 10, 64)
	switch {
	case err == nil && strconv.FormatInt(v, 10) == first && n <= l.setInts:
		return setIntset
	case n <= l.setEntries:
		return setListpack
	}
	return setHashtable
}

// fits reports whether a collection's content is within the compact limits.
// Lists are not asked: Redis 7.0 calls both list forms quicklist.
func (l encLimits) fits(k encKey) bool {
	switch k.typ {
	case "hash":
		for _, s := range k.elems {
			if len(s) > l.hashValue {
				return false
			}
		}
		return len(k.elems)/2 <= l.hashEntries
	case "set":
		return l.setForm(k) != setHashtable
	case "zset":
		for i := 0; i < len(k.elems); i += 2 {
			if len(k.elems[i]) > l.zsetValue {
				return false
			}
		}
		return len(k.elems)/2 <= l.zsetEntries
	}
	return true
}

// encodingName is OBJECT ENCODING of a collection type in its compact or
// large form.
func encodingName(typ string, large bool) string {
	switch {
	case typ == "list":
		return "quicklist"
	case large && typ == "zset":
		return "skiplist"
	case large:
		return "hashtable"
	case typ == "set":
		return "intset"
	}
	return "listpack"
}

// encKey is what a dump of one key found.
type encKey struct {
	typ   string   // TYPE: none, hash, set, zset or list
	enc   string   // OBJECT ENCODING
	elems []string // HGETALL, SMEMBERS, ZRANGE 0 -1 WITHSCORES or LRANGE 0 -1
	raw   string   // that listing's wire bytes
	ttl   string   // "expiring" for a key with a TTL, else empty
}

func (k encKey) large() bool { return k.typ != "none" && k.enc != encodingName(k.typ, false) }

// normal is the content in a form independent of the encoding: hash pairs
// and set members sorted, sorted sets and lists as they are.
func (k encKey) normal() string {
	elems := k.elems
	switch k.typ {
	case "hash":
		pairs := make([]string, 0, len(elems)/2)
		for i := 0; i+1 < len(elems); i += 2 {
			pairs = append(pairs, strconv.Quote(elems[i])+"="+strconv.Quote(elems[i+1]))
		}
		elems = pairs
		slices.Sort(elems)
	case "set":
		elems = slices.Sorted(slices.Values(elems))
	case "zset":
		elems = slices.Clone(elems)
		for i := 1; i < len(elems); i += 2 {
			elems[i] = unsignedZero(elems[i])
		}
	}
	return k.typ + " " + k.ttl + " " + fmt.Sprintf("%q", elems)
}

// encTarget is one server under test, with what the last dumps found.
type encTarget struct {
	name   string
	conn   *difftest.Conn
	limits encLimits
	keys   map[string]encKey
}

// encRun drives a sequence of commands through every target.
type encRun struct {
	tb      testing.TB
	targets []*encTarget
	log     []string
}

func newEncRun(tb testing.TB, targets []*encTarget) *encRun {
	r := &encRun{tb: tb, targets: targets}
	for _, t := range targets {
		t.keys = map[string]encKey{}
	}
	r.do([]string{"FLUSHALL"})
	return r
}

func (r *encRun) fail(format string, args ...any) {
	r.tb.Helper()
	r.tb.Fatalf("%s\nafter:\n%s", fmt.Sprintf(format, args...), strings.Join(r.log, "\n"))
}

// do sends cmds to every target as one pipeline and returns each target's
// replies.
func (r *encRun) do(cmds ...[]string) [][]difftest.Reply {
	r.tb.Helper()
	var batch []byte
	for _, c := range cmds {
		batch = append(batch, difftest.EncodeCommand(toAny(c)...)...)
	}
	for _, t := range r.targets {
		if err := t.conn.SendRaw(batch); err != nil {
			r.fail("%s: %v", t.name, err)
		}
	}
	out := make([][]difftest.Reply, len(r.targets))
	for i, t := range r.targets {
		for range cmds {
			rep, err := t.conn.Read()
			if err != nil {
				r.fail("%s: %v", t.name, err)
			}
			out[i] = append(out[i], rep)
		}
	}
	return out
}

func toAny(args []string) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a
	}
	return out
}

// quoteArgs formats a command as a line resp.SplitArgs reads back.
func quoteArgs(args []string) string {
	parts := make([]string, len(args))
	for i, a := range args {
		parts[i] = a
		if a == "" || strings.ContainsAny(a, " \"'\\") || strings.IndexFunc(a, func(c rune) bool { return c < '!' || c > '~' }) >= 0 {
			parts[i] = strconv.Quote(a)
		}
	}
	return strings.Join(parts, " ")
}

// script runs lines of commands, as resp.SplitArgs reads them.
func (r *encRun) script(lines string) {
	r.tb.Helper()
	for _, line := range strings.Split(lines, "\n") {
		args, ok := resp.SplitArgs([]byte(line), nil)
		if !ok {
			r.tb.Fatalf("bad script line %q", line)
		}
		if len(args) == 0 {
			continue
		}
		cmd := make([]string, len(args))
		for i, a := range args {
			cmd[i] = string(a)
		}
		r.step(cmd)
	}
}

// encKeyNames are the keys commands use, by type; members never look like
// keys, so a command's keys are the arguments among these.
var (
	encKeyNames = [][]string{{"H1", "H2"}, {"S1", "S2", "S3"}, {"Z1", "Z2", "Z3"}, {"L1", "L2"}}
	encAllKeys  = slices.Concat(encKeyNames...)
)

// step runs one command on every target and checks the replies, then dumps
// the keys it names and checks their content and encodings.
func (r *encRun) step(args []string) {
	r.tb.Helper()
	name := strings.ToUpper(args[0])
	if r.lexUnspecified(name, args) {
		return
	}
	r.log = append(r.log, quoteArgs(args))
	before := make([]map[string]encKey, len(r.targets))
	for i, t := range r.targets {
		before[i] = maps.Clone(t.keys)
	}
	var keys []string
	for _, a := range args[1:] {
		if slices.Contains(encAllKeys, a) && !slices.Contains(keys, a) {
			keys = append(keys, a)
		}
	}
	if name == "SWAPDB" {
		keys = encAllKeys
	}
	var replies []difftest.Reply
	switch name {
	case "SSCAN", "HSCAN", "ZSCAN":
		r.scanAll(args)
		r.dump(keys)
	case "SPOP", "SRANDMEMBER", "HRANDFIELD", "ZRANDMEMBER":
		replies = column(r.do(args), 0)
		r.checkRandom(name, args, replies)
		r.dump(keys)
	default:
		// The command and the dump go in one pipeline.
		rows := r.do(append([][]string{args}, dumpCmds(keys)...)...)
		replies = column(rows, 0)
		cmp := difftest.Exact
		switch name {
		case "SMEMBERS", "SINTER", "SUNION", "SDIFF", "HKEYS", "HVALS":
			cmp = difftest.Unordered
		case "HGETALL":
			cmp = difftest.UnorderedPairs
		}
		for i := 1; i < len(r.targets); i++ {
			a, b := replies[0], replies[i]
			if r.targets[0].limits != r.targets[i].limits {
				a, b = unsignedZeros(r.tb, a), unsignedZeros(r.tb, b)
			}
			if err := cmp(a, b); err != nil {
				r.fail("%s: %s %s vs %s %s: %v", quoteArgs(args), r.targets[0].name, replies[0], r.targets[i].name, replies[i], err)
			}
		}
		for i := range rows {
			rows[i] = rows[i][1:]
		}
		r.readDump(keys, rows)
	}
	for _, k := range keys {
		for i, t := range r.targets {
			if enc, known := r.expectEncoding(t, before[i], k, name, args, replies); known {
				r.checkEncoding(t, k, enc)
			}
		}
	}
}

// unsignedZero turns a score of -0 into 0: Redis keeps the sign in a
// skiplist but not in a listpack.
func unsignedZero(score string) string {
	if score == "-0" {
		return "0"
	}
	return score
}

// unsignedZeros is unsignedZero on every bulk string of a reply; members
// and values never read -0.
func unsignedZeros(tb testing.TB, rep difftest.Reply) difftest.Reply {
	raw := bytes.ReplaceAll(rep.Raw, []byte("$2\r\n-0\r\n"), []byte("$1\r\n0\r\n"))
	out, err := difftest.Parse(raw)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

func column(rows [][]difftest.Reply, j int) []difftest.Reply {
	out := make([]difftest.Reply, len(rows))
	for i, row := range rows {
		out[i] = row[j]
	}
	return out
}

// lexUnspecified reports a lex range command on a sorted set whose scores
// differ: Redis leaves the result unspecified (its skiplist's answer depends
// on the random node levels), so such commands are not sent.
func (r *encRun) lexUnspecified(name string, args []string) bool {
	key := args[1]
	switch name {
	case "ZRANGESTORE":
		key = args[2]
		fallthrough
	case "ZRANGE":
		if !slices.ContainsFunc(args, func(a string) bool { return strings.EqualFold(a, "BYLEX") }) {
			return false
		}
	case "ZRANGEBYLEX", "ZREVRANGEBYLEX", "ZLEXCOUNT", "ZREMRANGEBYLEX":
	default:
		return false
	}
	k := r.targets[0].keys[key]
	if k.typ != "zset" {
		return false
	}
	for i := 3; i < len(k.elems); i += 2 {
		if k.elems[i] != k.elems[1] {
			return true
		}
	}
	return false
}

// expectEncoding says which encoding key must have on t after a command,
// when that is known: Redis converts when the content passes a limit and
// never back, except that a STORE destination is built anew, COPY and
// RENAME carry the source's encoding, HSET converts for any too long
// argument first, SADD converts for its number of members (sets have three
// forms, intset, listpack and hashtable: saddForm), SORT converts a sorted
// set, and an SPOP count near the size rebuilds the set from the members
// that stay, which the targets chose at random. Keys that SWAPDB brings
// from database 1 are only checked against the limits.
func (r *encRun) expectEncoding(t *encTarget, before map[string]encKey, key, name string, args []string, replies []difftest.Reply) (enc string, known bool) {
	cur := t.keys[key]
	if cur.typ == "none" {
		return "", false
	}
	var rep difftest.Reply
	if replies != nil {
		rep = replies[slices.Index(r.targets, t)]
	}
	prev, existed := before[key]
	fresh := !existed || prev.typ != cur.typ
	large := func(large bool) (string, bool) { return encodingName(cur.typ, large), true }
	switch name {
	case "SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE", "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE", "ZRANGESTORE":
		fresh = fresh || (key == args[1] && !rep.IsError())
	case "COPY", "RENAME":
		if key == args[2] && (rep.Kind == difftest.KindSimple || rep.Int == 1) {
			return before[args[1]].enc, true
		}
	case "HSET", "HMSET":
		if !rep.IsError() {
			for _, a := range args[2:] {
				if len(a) > t.limits.hashValue {
					return large(true)
				}
			}
		}
	case "SPOP":
		if len(args) == 3 {
			count, err := strconv.Atoi(args[2])
			size := len(prev.elems)
			if err == nil && count < size && (size-count)*5 <= count && t.limits.fits(cur) {
				return "", false
			}
		}
	case "SORT", "SORT_RO":
		// Redis turns a sorted set into a skiplist for good once the
		// options parsed, even if sorting then fails.
		if key == args[1] && cur.typ == "zset" && (!rep.IsError() || strings.Contains(rep.Str, "can't be converted")) {
			return large(true)
		}
	case "SWAPDB":
		// Database 1 is not followed.
		if t.limits.fits(cur) {
			return "", false
		}
		return large(true)
	}
	if cur.typ == "set" {
		form := t.limits.setForm(cur)
		if !fresh {
			form = max(form, slices.Index(setEncodings, prev.enc))
		}
		if name == "SADD" && key == args[1] {
			form = max(form, t.limits.saddForm(fresh, slices.Index(setEncodings, prev.enc), args[2], len(args)-2))
		}
		return setEncodings[form], true
	}
	return large(!t.limits.fits(cur) || (!fresh && prev.large()))
}

func (r *encRun) checkEncoding(t *encTarget, key, want string) {
	r.tb.Helper()
	k := t.keys[key]
	if k.typ == "none" {
		return
	}
	if k.enc != want {
		r.fail("%s: OBJECT ENCODING %s is %s, want %s (content %s)", t.name, key, k.enc, want, k.normal())
	}
}

// dump reads keys on every target, requires the same content everywhere (and
// the same bytes where the compact encodings match), and records them.
func (r *encRun) dump(keys []string) {
	r.tb.Helper()
	if len(keys) > 0 {
		r.readDump(keys, r.do(dumpCmds(keys)...))
	}
}

// dumpCmds are the commands dump sends, encKeyDump of them per key.
func dumpCmds(keys []string) [][]string {
	var cmds [][]string
	for _, k := range keys {
		cmds = append(cmds,
			[]string{"TYPE", k}, []string{"OBJECT", "ENCODING", k},
			[]string{"HGETALL", k}, []string{"SMEMBERS", k}, []string{"ZRANGE", k, "0", "-1", "WITHSCORES"}, []string{"LRANGE", k, "0", "-1"},
			[]string{"HLEN", k}, []string{"SCARD", k}, []string{"ZCARD", k}, []string{"LLEN", k},
			[]string{"PTTL", k})
	}
	return cmds
}

const encKeyDump = 11

// readDump is dump on the replies to dumpCmds, per target.
func (r *encRun) readDump(keys []string, rows [][]difftest.Reply) {
	r.tb.Helper()
	for ki, key := range keys {
		got := make([]encKey, len(r.targets))
		for i, t := range r.targets {
			reps := rows[i][ki*encKeyDump : (ki+1)*encKeyDump]
			k := encKey{typ: reps[0].Str, enc: reps[1].Str}
			if reps[10].Int >= 0 {
				k.ttl = "expiring"
			}
			if j := slices.Index([]string{"hash", "set", "zset", "list"}, k.typ); j >= 0 {
				listing, n := reps[2+j], reps[6+j].Int
				k.raw = string(listing.Raw)
				for _, e := range listing.Elems {
					k.elems = append(k.elems, e.Str)
				}
				if j == 0 || j == 2 {
					n *= 2
				}
				if int64(len(k.elems)) != n || n == 0 {
					r.fail("%s: %s %s has %d listed elements, length reply %s", t.name, k.typ, key, len(k.elems), reps[6+j])
				}
			} else if k.typ != "none" {
				r.fail("%s: TYPE %s is %s", t.name, key, k.typ)
			}
			got[i] = k
			t.keys[key] = k
		}
		for i := 1; i < len(got); i++ {
			a, b := got[0], got[i]
			if a.normal() != b.normal() {
				r.fail("%s: %s differs:\n%s: %s (%s)\n%s: %s (%s)", r.log[len(r.log)-1], key, r.targets[0].name, a.normal(), a.enc, r.targets[i].name, b.normal(), b.enc)
			}
		}
		for i := range got {
			for j := i + 1; j < len(got); j++ {
				a, b := got[i], got[j]
				// Compact forms have one order: insertion for a listpack
				// hash, ascending for an intset.
				if a.enc == b.enc && !a.large() && a.raw != b.raw {
					r.fail("%s: %s listed in another order: %s %q, %s %q", r.log[len(r.log)-1], key, r.targets[i].name, a.raw, r.targets[j].name, b.raw)
				}
			}
		}
	}
}

// verifyAll dumps every key again: keys no command named since their last
// dump (e.g. the source of a COPY) must not have changed.
func (r *encRun) verifyAll() {
	r.tb.Helper()
	want := make([]map[string]encKey, len(r.targets))
	for i, t := range r.targets {
		want[i] = maps.Clone(t.keys)
	}
	r.dump(encAllKeys)
	for i, t := range r.targets {
		for _, k := range encAllKeys {
			w, ok := want[i][k]
			if !ok {
				w.typ = "none"
			}
			if g := t.keys[k]; g.normal() != w.normal() || g.enc != w.enc {
				r.fail("%s: %s changed behind the commands: was %s (%s), now %s (%s)", t.name, k, w.normal(), w.enc, g.normal(), g.enc)
			}
		}
	}
}

// scanAll runs a SSCAN, HSCAN or ZSCAN to the end on every target; the
// elements returned (duplicates aside) must be the same everywhere.
func (r *encRun) scanAll(args []string) {
	r.tb.Helper()
	pairs := args[0][0] != 'S' && args[0][0] != 's'
	var first []difftest.Reply
	var found []string
	for i, t := range r.targets {
		seen := map[string]bool{}
		cursor := args[2]
		for calls := 0; ; calls++ {
			a := slices.Clone(args)
			a[2] = cursor
			rep, err := t.conn.Do(toAny(a)...)
			if err != nil {
				r.fail("%s: %v", t.name, err)
			}
			if calls == 0 {
				first = append(first, rep)
			}
			if rep.Kind != difftest.KindArray || len(rep.Elems) != 2 {
				break
			}
			els := rep.Elems[1].Elems
			if pairs && len(els)%2 != 0 {
				r.fail("%s: odd scan reply %s", t.name, rep)
			}
			for j := 0; j < len(els); j++ {
				u := strconv.Quote(els[j].Str)
				if pairs {
					j++
					u += "=" + strconv.Quote(unsignedZero(els[j].Str))
				}
				seen[u] = true
			}
			if cursor = rep.Elems[0].Str; cursor == "0" {
				break
			}
			if calls > 10000 {
				r.fail("%s: scan does not end", t.name)
			}
		}
		units := slices.Sorted(func(yield func(string) bool) {
			for u := range seen {
				if !yield(u) {
					return
				}
			}
		})
		found = append(found, strings.Join(units, " "))
		if i > 0 && (first[0].IsError() || first[i].IsError()) && !first[0].Equal(first[i]) {
			r.fail("%s: %s %s vs %s %s", quoteArgs(args), r.targets[0].name, first[0], t.name, first[i])
		}
		if found[i] != found[0] {
			r.fail("%s: %s found %s, %s found %s", quoteArgs(args), r.targets[0].name, found[0], t.name, found[i])
		}
	}
}

// checkRandom checks the replies of a command that picks at random: as long
// as each target's and of the same shape, drawn from the key's content, and
// distinct where they must be. SPOP's targets then remove every member any
// of them popped, so that they agree again.
func (r *encRun) checkRandom(name string, args []string, replies []difftest.Reply) {
	r.tb.Helper()
	for i := 1; i < len(replies); i++ {
		a, b := replies[0], replies[i]
		if a.IsError() || b.IsError() || a.Kind != b.Kind || a.Null != b.Null || len(a.Elems) != len(b.Elems) {
			if !a.Equal(b) {
				r.fail("%s: %s %s vs %s %s", quoteArgs(args), r.targets[0].name, a, r.targets[i].name, b)
			}
		}
	}
	if replies[0].IsError() || replies[0].Null {
		return
	}
	content := r.targets[0].keys[args[1]]
	unit := 1 // elements per drawn member
	if len(args) > 3 {
		unit = 2 // WITHVALUES, WITHSCORES
	}
	// What may be drawn: members, or members with their values or scores.
	valid := map[string]bool{}
	step := 1
	if content.typ == "hash" || content.typ == "zset" {
		step = 2
	}
	for j := 0; j+step <= len(content.elems); j += step {
		u := strconv.Quote(content.elems[j])
		if unit == 2 {
			u += "=" + strconv.Quote(unsignedZero(content.elems[j+1]))
		}
		valid[u] = true
	}
	distinct := name == "SPOP" || (len(args) > 2 && !strings.HasPrefix(args[2], "-"))
	var popped []string
	for i, rep := range replies {
		els := rep.Elems
		if rep.Kind != difftest.KindArray {
			els = []difftest.Reply{rep}
		}
		seen := map[string]bool{}
		for j := 0; j+unit <= len(els); j += unit {
			u := strconv.Quote(els[j].Str)
			if unit == 2 {
				u += "=" + strconv.Quote(unsignedZero(els[j+1].Str))
			}
			if !valid[u] {
				r.fail("%s: %s drew %s, not in %s", quoteArgs(args), r.targets[i].name, u, content.normal())
			}
			if seen[u] && distinct {
				r.fail("%s: %s drew %s twice: %s", quoteArgs(args), r.targets[i].name, u, rep)
			}
			seen[u] = true
			if name == "SPOP" && !slices.Contains(popped, els[j].Str) {
				popped = append(popped, els[j].Str)
			}
		}
	}
	if len(popped) > 0 {
		r.do(append([]string{"SREM", args[1]}, popped...))
	}
}

// encGen turns fuzz bytes into commands; an exhausted input reads as zeros.
type encGen struct {
	data  []byte
	bulks int // bulk commands so far
}

func (g *encGen) next() int {
	if len(g.data) == 0 {
		return 0
	}
	b := g.data[0]
	g.data = g.data[1:]
	return int(b)
}

func (g *encGen) pick(xs ...string) string { return xs[g.next()%len(xs)] }

// upTo returns 1 to n.
func (g *encGen) upTo(n int) int { return 1 + g.next()%n }

var (
	// encMembers mixes canonical integers (intsets), non-canonical ones,
	// short strings, and strings longer than the tiny (8) and default (64)
	// value limits.
	encMembers = []string{"a", "b", "c", "d", "e", "f", "0", "1", "2", "3", "-1", "7", "100", "-100",
		"12345678901", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
		"01", "+1", "-01", " 1", "1.5", "", "\x00\xff", "abcdefghijkl", strings.Repeat("x", 70)}
	encValues = []string{"1", "0", "-7", "10", "1.5", "1e3", "v", "vv", "", "123456789", "-9223372036854775808",
		"9223372036854775807", "abcdefghijkl", strings.Repeat("y", 65)}
	encCounts  = []string{"0", "1", "2", "3", "5", "-1", "-2", "-5", "10", "-10", "9223372036854775807", "-9223372036854775808", "x", "-9223372036854775807"}
	encIndexes = []string{"0", "1", "2", "-1", "-2", "-3", "3", "5", "-100", "100", "9223372036854775807", "-9223372036854775808", "x"}
	encScores  = []string{"0", "1", "2", "-1", "1.5", "-2.5", "+inf", "-inf", "3", "1e300", "5", "10", "nan", "abc"}
	encMins    = []string{"-inf", "+inf", "0", "1", "(1", "2", "(2", "1.5", "-1", "(0", "3", "x", "(+inf", "(-inf", "(1e300"}
	encLexes   = []string{"-", "+", "[a", "(a", "[b", "(c", "[1", "(1", "[", "(", "x", "[abcdefghijkl", "[7"}
	encGlobs   = []string{"*", "a*", "*1*", "?", "[0-9]*", "x*", "\\", "[", "*[a-c]"}
)

// score is mostly 0: lex ranges need sorted sets of one score.
func (g *encGen) score() string {
	b := g.next()
	if b%2 == 0 {
		return "0"
	}
	return encScores[b/2%len(encScores)]
}

func (g *encGen) member() string { return g.pick(encMembers...) }
func (g *encGen) members(n int) []string {
	out := make([]string, g.upTo(n))
	for i := range out {
		out[i] = g.member()
	}
	return out
}

// setMembers are 1 to n members, three in four of them integers, so that
// intsets last.
func (g *encGen) setMembers(n int) []string {
	out := make([]string, g.upTo(n))
	for i := range out {
		if b := g.next(); b%4 != 0 {
			out[i] = strconv.Itoa(b%16 - 4)
		} else {
			out[i] = g.member()
		}
	}
	return out
}

// key returns a key of the given type (0 hash, 1 set, 2 zset, 3 list), now
// and then one of another type: WRONGTYPE paths, and STOREs over it.
func (g *encGen) key(typ int) string {
	b := g.next()
	if b%16 == 15 {
		return encAllKeys[(b/16)%len(encAllKeys)]
	}
	return encKeyNames[typ][b%len(encKeyNames[typ])]
}

func (g *encGen) keys(typ, n int) []string {
	out := make([]string, g.upTo(n))
	for i := range out {
		out[i] = g.key(typ)
	}
	return out
}

// zkeys are inputs of ZUNION and friends: sorted sets or sets.
func (g *encGen) zkeys() []string {
	out := make([]string, g.upTo(3))
	for i := range out {
		out[i] = g.key(1 + g.next()%2)
	}
	return out
}

// numkeys prefixes keys with their count, sometimes a wrong one.
func (g *encGen) numkeys(keys []string) []string {
	n := strconv.Itoa(len(keys))
	if g.next()%16 == 0 {
		n = g.pick("0", "-1", "5", "x")
	}
	return append([]string{n}, keys...)
}

func (g *encGen) scanOpts(args []string) []string {
	cursor := "0"
	if g.next()%32 == 0 {
		// Not an overflowing cursor: Redis leaves its ERANGE in errno, and
		// a later SORT takes it for its own conversion error.
		cursor = g.pick("x", "-", "")
	}
	args = append(args, cursor)
	for n := g.next() % 3; n > 0; n-- {
		if g.next()%2 == 0 {
			args = append(args, "MATCH", g.pick(encGlobs...))
		} else {
			args = append(args, "COUNT", g.pick("1", "2", "10", "0", "-1"))
		}
	}
	return args
}

func (g *encGen) limit(args []string) []string {
	if g.next()%2 == 0 {
		return args
	}
	return append(args, "LIMIT", g.pick(encIndexes...), g.pick(encCounts...))
}

// zrange returns ZRANGE's arguments after the key: by index, score or lex,
// reversed or not, with a LIMIT, and WITHSCORES unless storing.
func (g *encGen) zrange(store bool) []string {
	var args []string
	b := g.next()
	switch b % 3 {
	case 0:
		args = []string{g.pick(encIndexes...), g.pick(encIndexes...)}
	case 1:
		args = []string{g.pick(encMins...), g.pick(encMins...), "BYSCORE"}
	case 2:
		args = []string{g.pick(encLexes...), g.pick(encLexes...), "BYLEX"}
	}
	if b/3%2 == 1 {
		args = append(args, "REV")
	}
	if b/6%3 == 1 {
		args = append(args, "LIMIT", g.pick(encIndexes...), g.pick(encCounts...))
	}
	if !store && b/18%2 == 1 {
		args = append(args, "WITHSCORES")
	}
	return args
}

// zalgebra returns ZUNION/ZINTER/ZDIFF's arguments after the command name
// (and destination): numkeys, keys, WEIGHTS, AGGREGATE.
func (g *encGen) zalgebra(diff bool) []string {
	keys := g.zkeys()
	args := g.numkeys(keys)
	if diff {
		return args
	}
	if g.next()%3 == 0 {
		args = append(args, "WEIGHTS")
		for range keys {
			args = append(args, g.pick("1", "2", "-1", "0", "1.5", "inf", "x"))
		}
	}
	if g.next()%3 == 0 {
		args = append(args, "AGGREGATE", g.pick("SUM", "MIN", "MAX", "x"))
	}
	return args
}

// encGrowOps add elements (HSET, SADD, ZADD, pushes); a quarter of the
// commands are theirs, so that keys grow past the tiny limits.
var encGrowOps = []func(g *encGen) []string{
	func(g *encGen) []string {
		args := []string{g.pick("HSET", "HMSET"), g.key(0)}
		for n := g.upTo(4); n > 0; n-- {
			args = append(args, g.member(), g.pick(encValues...))
		}
		if g.next()%16 == 0 {
			args = args[:len(args)-1]
		}
		return args
	},
	func(g *encGen) []string { return append([]string{"SADD", g.key(1)}, g.setMembers(5)...) },
	func(g *encGen) []string {
		args := []string{"ZADD", g.key(2)}
		b := g.next()
		args = append(args, [][]string{nil, {"NX"}, {"XX"}}[b%3]...)
		args = append(args, [][]string{nil, {"GT"}, {"LT"}}[b/3%3]...)
		if b/9%2 == 1 {
			args = append(args, "CH")
		}
		n := g.upTo(3)
		if b/18%4 == 1 {
			args = append(args, "INCR")
			n = 1 + g.next()%8/7 // mostly the one pair INCR allows
		}
		for ; n > 0; n-- {
			args = append(args, g.score(), g.member())
		}
		return args
	},
	func(g *encGen) []string {
		return append([]string{g.pick("LPUSH", "RPUSH", "LPUSHX", "RPUSHX"), g.key(3)}, g.members(5)...)
	},
}

// bulk adds, or removes, up to 255 generated elements at once, of 0 to
// 1274: a few pass the default limits, and make tables large enough to grow,
// sample and compact. A run has at most four, which keeps it fast.
func (g *encGen) bulk() []string {
	b := g.next()
	typ := b % 4
	names := []string{"HSET", "SADD", "ZADD", "RPUSH"}
	remove := b/4%2 == 1 && typ != 3
	if remove {
		names = []string{"HDEL", "SREM", "ZREM"}
	}
	args := []string{names[typ], g.key(typ)}
	n, base := g.next(), 4*g.next()
	for i := range n {
		v := strconv.Itoa(base + i)
		switch {
		case typ == 0 && remove:
			args = append(args, "f"+v)
		case typ == 0:
			// Values change length: the old record is dead.
			args = append(args, "f"+v, v+strings.Repeat("z", b/8%4))
		case typ == 1:
			args = append(args, v)
		case typ == 2 && remove:
			args = append(args, "m"+v)
		case typ == 2:
			args = append(args, strconv.Itoa(i%5), "m"+v)
		default:
			args = append(args, "e"+v)
		}
	}
	return args
}

// encOps generate the other commands.
var encOps = []func(g *encGen) []string{
	// Hashes.
	func(g *encGen) []string { return []string{"HSETNX", g.key(0), g.member(), g.pick(encValues...)} },
	func(g *encGen) []string {
		return []string{g.pick("HGET", "HEXISTS", "HSTRLEN"), g.key(0), g.member()}
	},
	func(g *encGen) []string { return append([]string{"HMGET", g.key(0)}, g.members(4)...) },
	func(g *encGen) []string {
		return []string{g.pick("HGETALL", "HKEYS", "HVALS", "HLEN"), g.key(0)}
	},
	func(g *encGen) []string { return append([]string{"HDEL", g.key(0)}, g.members(4)...) },
	func(g *encGen) []string {
		return []string{"HINCRBY", g.key(0), g.member(), g.pick("1", "-1", "100", "9223372036854775807", "-9223372036854775808", "x", "0")}
	},
	func(g *encGen) []string {
		return []string{"HINCRBYFLOAT", g.key(0), g.member(), g.pick("1.5", "-1", "1e100", "0.1", "1e308", "inf", "5.0e3", "-0", "x")}
	},
	func(g *encGen) []string {
		args := []string{"HRANDFIELD", g.key(0)}
		if b := g.next(); b%4 != 0 {
			args = append(args, g.pick(encCounts[:10]...))
			if b%2 == 0 {
				args = append(args, "WITHVALUES")
			}
		}
		return args
	},
	func(g *encGen) []string { return g.scanOpts([]string{"HSCAN", g.key(0)}) },
	// Sets.
	func(g *encGen) []string { return append([]string{"SREM", g.key(1)}, g.setMembers(4)...) },
	func(g *encGen) []string { return append([]string{"SISMEMBER", g.key(1)}, g.setMembers(1)...) },
	func(g *encGen) []string { return append([]string{"SMISMEMBER", g.key(1)}, g.setMembers(4)...) },
	func(g *encGen) []string { return []string{g.pick("SMEMBERS", "SCARD"), g.key(1)} },
	func(g *encGen) []string {
		args := []string{g.pick("SPOP", "SRANDMEMBER"), g.key(1)}
		if g.next()%3 != 0 {
			args = append(args, g.pick(encCounts[:10]...))
		}
		return args
	},
	func(g *encGen) []string { return append([]string{"SMOVE", g.key(1), g.key(1)}, g.setMembers(1)...) },
	func(g *encGen) []string {
		return append([]string{g.pick("SINTER", "SUNION", "SDIFF")}, g.keys(1, 3)...)
	},
	func(g *encGen) []string {
		return append([]string{g.pick("SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"), g.key(1)}, g.keys(1, 3)...)
	},
	func(g *encGen) []string {
		return g.limit(append([]string{"SINTERCARD"}, g.numkeys(g.keys(1, 3))...))
	},
	func(g *encGen) []string { return g.scanOpts([]string{"SSCAN", g.key(1)}) },
	// Sorted sets.
	func(g *encGen) []string { return []string{"ZINCRBY", g.key(2), g.pick(encScores...), g.member()} },
	func(g *encGen) []string { return append([]string{"ZREM", g.key(2)}, g.members(4)...) },
	func(g *encGen) []string {
		return []string{g.pick("ZSCORE", "ZRANK", "ZREVRANK"), g.key(2), g.member()}
	},
	func(g *encGen) []string { return append([]string{"ZMSCORE", g.key(2)}, g.members(4)...) },
	func(g *encGen) []string { return []string{"ZCARD", g.key(2)} },
	func(g *encGen) []string { return []string{"ZCOUNT", g.key(2), g.pick(encMins...), g.pick(encMins...)} },
	func(g *encGen) []string {
		return []string{"ZLEXCOUNT", g.key(2), g.pick(encLexes...), g.pick(encLexes...)}
	},
	func(g *encGen) []string { return append([]string{"ZRANGE", g.key(2)}, g.zrange(false)...) },
	func(g *encGen) []string {
		return append([]string{"ZRANGESTORE", g.key(2), g.key(2)}, g.zrange(true)...)
	},
	func(g *encGen) []string {
		args := []string{g.pick("ZRANGEBYSCORE", "ZREVRANGEBYSCORE"), g.key(2), g.pick(encMins...), g.pick(encMins...)}
		if g.next()%2 == 0 {
			args = append(args, "WITHSCORES")
		}
		return g.limit(args)
	},
	func(g *encGen) []string {
		return g.limit([]string{g.pick("ZRANGEBYLEX", "ZREVRANGEBYLEX"), g.key(2), g.pick(encLexes...), g.pick(encLexes...)})
	},
	func(g *encGen) []string {
		args := []string{"ZREVRANGE", g.key(2), g.pick(encIndexes...), g.pick(encIndexes...)}
		if g.next()%2 == 0 {
			args = append(args, "WITHSCORES")
		}
		return args
	},
	func(g *encGen) []string {
		switch g.next() % 3 {
		case 0:
			return []string{"ZREMRANGEBYRANK", g.key(2), g.pick(encIndexes...), g.pick(encIndexes...)}
		case 1:
			return []string{"ZREMRANGEBYSCORE", g.key(2), g.pick(encMins...), g.pick(encMins...)}
		}
		return []string{"ZREMRANGEBYLEX", g.key(2), g.pick(encLexes...), g.pick(encLexes...)}
	},
	func(g *encGen) []string {
		args := []string{g.pick("ZPOPMIN", "ZPOPMAX"), g.key(2)}
		if g.next()%2 == 0 {
			args = append(args, g.pick(encCounts...))
		}
		return args
	},
	func(g *encGen) []string {
		args := append([]string{"ZMPOP"}, g.numkeys(g.keys(2, 3))...)
		args = append(args, g.pick("MIN", "MAX", "x"))
		if g.next()%2 == 0 {
			args = append(args, "COUNT", g.pick(encCounts...))
		}
		return args
	},
	func(g *encGen) []string {
		args := []string{"ZRANDMEMBER", g.key(2)}
		if b := g.next(); b%4 != 0 {
			args = append(args, g.pick(encCounts[:10]...))
			if b%2 == 0 {
				args = append(args, "WITHSCORES")
			}
		}
		return args
	},
	func(g *encGen) []string {
		name := g.pick("ZUNION", "ZINTER", "ZDIFF")
		args := append([]string{name}, g.zalgebra(name == "ZDIFF")...)
		if g.next()%2 == 0 {
			args = append(args, "WITHSCORES")
		}
		return args
	},
	func(g *encGen) []string {
		name := g.pick("ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE")
		return append([]string{name, g.key(2)}, g.zalgebra(name == "ZDIFFSTORE")...)
	},
	func(g *encGen) []string {
		return g.limit(append([]string{"ZINTERCARD"}, g.numkeys(g.zkeys())...))
	},
	func(g *encGen) []string { return g.scanOpts([]string{"ZSCAN", g.key(2)}) },
	// Lists.
	func(g *encGen) []string {
		args := []string{g.pick("LPOP", "RPOP"), g.key(3)}
		if g.next()%2 == 0 {
			args = append(args, g.pick(encCounts...))
		}
		return args
	},
	func(g *encGen) []string { return []string{"LINDEX", g.key(3), g.pick(encIndexes...)} },
	func(g *encGen) []string {
		return []string{g.pick("LRANGE", "LTRIM"), g.key(3), g.pick(encIndexes...), g.pick(encIndexes...)}
	},
	func(g *encGen) []string {
		return []string{"LINSERT", g.key(3), g.pick("BEFORE", "AFTER", "x"), g.member(), g.member()}
	},
	func(g *encGen) []string { return []string{"LREM", g.key(3), g.pick(encCounts...), g.member()} },
	func(g *encGen) []string { return []string{"LSET", g.key(3), g.pick(encIndexes...), g.member()} },
	func(g *encGen) []string {
		args := []string{"LPOS", g.key(3), g.member()}
		for n := g.next() % 4; n > 0; n-- {
			args = append(args, g.pick("RANK", "COUNT", "MAXLEN"), g.pick(encCounts...))
		}
		return args
	},
	func(g *encGen) []string {
		if g.next()%3 == 0 {
			return []string{"RPOPLPUSH", g.key(3), g.key(3)}
		}
		return []string{"LMOVE", g.key(3), g.key(3), g.pick("LEFT", "RIGHT"), g.pick("LEFT", "RIGHT")}
	},
	func(g *encGen) []string {
		args := append([]string{"LMPOP"}, g.numkeys(g.keys(3, 3))...)
		args = append(args, g.pick("LEFT", "RIGHT", "x"))
		if g.next()%2 == 0 {
			args = append(args, "COUNT", g.pick(encCounts...))
		}
		return args
	},
	func(g *encGen) []string { return []string{"LLEN", g.key(3)} },
	// Keys of any type.
	func(g *encGen) []string {
		b := g.next()
		args := []string{"SORT", g.key(b % 4)}
		if b/4%2 == 1 {
			args = append(args, "ALPHA")
		}
		if b/8%2 == 1 {
			args = append(args, "DESC")
		}
		if b/16%2 == 1 {
			args = append(args, "LIMIT", g.pick(encIndexes...), g.pick(encCounts...))
		}
		if b/32%2 == 1 {
			args = append(args, "STORE", g.key(3))
		}
		return args
	},
	func(g *encGen) []string {
		typ := g.next() % 4
		switch g.next() % 7 {
		case 0:
			return []string{"DEL", g.key(typ)}
		case 1:
			return []string{"RENAME", g.key(typ), g.key(typ)}
		case 2:
			return []string{"EXPIRE", g.key(typ), "1000"}
		case 3:
			return []string{"PERSIST", g.key(typ)}
		case 4:
			return []string{"MOVE", g.key(typ), "1"}
		case 5:
			return []string{"SWAPDB", "0", "1"}
		}
		args := []string{"COPY", g.key(typ), g.key(typ)}
		if g.next()%2 == 0 {
			args = append(args, "REPLACE")
		}
		return args
	},
}

func (g *encGen) command() []string {
	b := g.next()
	switch {
	case b < 64:
		return encGrowOps[b%len(encGrowOps)](g)
	case b < 68 && g.bulks < 4:
		g.bulks++
		return g.bulk()
	}
	return encOps[b%len(encOps)](g)
}

// runEncodingFuzz runs the commands data decodes to.
func runEncodingFuzz(tb testing.TB, targets []*encTarget, data []byte) {
	r := newEncRun(tb, targets)
	g := &encGen{data: data}
	for steps := 0; steps < 200 && len(g.data) > 0; steps++ {
		r.step(g.command())
	}
	r.verifyAll()
}

func FuzzEncodings(f *testing.F) {
	// Random seeds: long enough to grow keys past the tiny limits.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 12 {
		seed := make([]byte, 600)
		for i := range seed {
			seed[i] = byte(rng.IntN(256))
		}
		f.Add(seed)
	}
	var targets []*encTarget
	for _, t := range []struct {
		name   string
		limits encLimits
	}{{"default", encDefault}, {"tiny", encTiny}, {"large", encLarge}} {
		srv := startKeyhive(f, t.limits.keyhiveDirectives()...)
		targets = append(targets, &encTarget{name: t.name, conn: dial(f, srv.Addr()), limits: t.limits})
	}
	f.Fuzz(func(t *testing.T, data []byte) { runEncodingFuzz(t, targets, data) })
}

// encSequences are command sequences around the conversions, some of them
// found by FuzzEncodings, replayed against redis-server.
var encSequences = []string{
	// A hash grows past the entry and value limits and shrinks again.
	`HSET H1 a 1 b 2 c 3
HSET H1 d 4 a 5
HGETALL H1
HSET H1 e 5
HDEL H1 e d
HGETALL H1
HSET H2 f abcdefghijkl f 1
HSETNX H2 g abcdefghijkl
HINCRBYFLOAT H1 a 1e100
HINCRBY H1 b 123456789
HSCAN H2 0 MATCH * COUNT 1
HRANDFIELD H1 -5 WITHVALUES
HRANDFIELD H1 10 WITHVALUES
COPY H1 H2 REPLACE
HDEL H2 a
EXPIRE H2 100
RENAME H2 H1`,
	// Sets: an intset until a string, a non-canonical integer or too many.
	`SADD S1 3 1 2
SADD S1 -0
SADD S2 1 2 3 4 5
SREM S2 5
SADD S3 01 1
SINTERSTORE Z1 S2 S1
SUNIONSTORE S3 S1 S2
SDIFFSTORE S2 S2 S1
SPOP S3 2
SPOP S3 10
SMOVE S1 S2 -0
SMOVE S1 S3 1
SMEMBERS S2
SSCAN S1 0 COUNT 1
EXPIRE S1 100
SADD S1 a
SRANDMEMBER S1 -5`,
	// Sorted sets: past the limits, back to listpack when stored anew.
	`ZADD Z1 1 a 2 b 3 c 4 d
ZADD Z1 5 e
ZREM Z1 e
ZRANGESTORE Z2 Z1 0 1
ZADD Z3 0 a 0 abcdefghijkl 0 c
ZRANGEBYLEX Z3 [b +
ZREMRANGEBYLEX Z3 (a [b
ZUNIONSTORE Z3 2 Z3 Z1 WEIGHTS 1 2
ZINTERSTORE Z2 2 Z1 S1 AGGREGATE MAX
ZINCRBY Z2 1 abcdefghijkl
ZPOPMIN Z1 2
ZMPOP 2 Z3 Z2 MAX COUNT 2
ZRANDMEMBER Z1 -3 WITHSCORES
ZSCAN Z3 0 MATCH *`,
	// Lists across node boundaries.
	`RPUSH L1 a b c d e f g
LINSERT L1 BEFORE d x
LSET L1 -1 abcdefghijkl
LTRIM L1 1 -2
LREM L1 -1 x
LMOVE L1 L2 RIGHT LEFT
LPOS L1 c RANK -1
LMPOP 2 L2 L1 LEFT COUNT 3
RPOPLPUSH L1 L1`,
}

// TestEncodingSequences replays encSequences against redis-server 7.0.15,
// Keyhive keeping 7.0's sets (set-max-listpack-entries 0): 7.4.1 would also
// answer 7.2's list encodings, which Keyhive does not yet.
// TestSetListpack compares listpack sets with 7.4.1.
func TestEncodingSequences(t *testing.T) {
	for _, c := range []struct {
		name   string
		limits encLimits
	}{{"default", encDefault.sets70()}, {"tiny", encTiny.sets70()}, {"large", encLarge.sets70()}} {
		t.Run(c.name, func(t *testing.T) {
			p := difftest.StartIsolated(t, c.limits.directives()...)
			p.Keyhive().Do("CONFIG", "SET", "set-max-listpack-entries", "0")
			targets := []*encTarget{
				{name: "redis", conn: p.Redis().Conn(), limits: c.limits},
				{name: "keyhive", conn: p.Keyhive().Conn(), limits: c.limits},
			}
			for _, seq := range encSequences {
				r := newEncRun(t, targets)
				r.script(seq)
				r.verifyAll()
			}
		})
	}
}

// TestSPOPRebuildsSet: an SPOP count of at least five times the members that
// stay rebuilds the set from them, so a hashtable of integers becomes a
// listpack (Redis 7.2; 7.0 made an intset); a smaller count leaves the
// encoding. Against 7.4.1.
func TestSPOPRebuildsSet(t *testing.T) {
	p := difftest.Start74(t)
	p.Do("SADD", "s", "a", "1", "2", "3", "4", "5", "6")
	p.Do("SREM", "s", "a")
	p.Do("EXPIRE", "s", "100")
	p.Do("OBJECT", "ENCODING", "s")
	p.DoDifferent("random members", "SPOP", "s", "5")
	p.Do("OBJECT", "ENCODING", "s")
	p.Do("SCARD", "s")
	p.DoApprox(1, "TTL", "s")
	p.Do("SADD", "t", "a", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11")
	p.Do("SREM", "t", "a")
	p.DoDifferent("random members", "SPOP", "t", "8")
	p.Do("OBJECT", "ENCODING", "t")
	p.Do("SCARD", "t")
}
