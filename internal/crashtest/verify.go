package crashtest

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

var partNames = []string{"string", "list", "hash", "zset"}

// findings is what the verifier found for one connection's operations.
type findings struct {
	present    []bool   // present[i-1]: operation i's effects are in the data
	torn       int      // values that are not what was written
	broken     int      // MULTI or EVAL operations partly applied
	unexpected int      // effects of no operation sent (or of a refused one)
	notes      []string // the first few problems, for the report
}

func (f *findings) note(format string, args ...any) {
	if len(f.notes) < 3 {
		f.notes = append(f.notes, fmt.Sprintf(format, args...))
	}
}

// verifyConn reads what is left of operations 1..sent of connection conn of
// generation gen and reports which are present.
func verifyConn(c *client, l load, gen, conn, sent int) (*findings, error) {
	p := prefix(gen, conn)
	f := &findings{present: make([]bool, sent)}
	kinds := make([]opKind, sent+1)
	var byKind [numOpKinds][]int // the operations of each kind, in order
	for seq := 1; seq <= sent; seq++ {
		kinds[seq] = kindOf(l, gen, conn, seq)
		byKind[kinds[seq]] = append(byKind[kinds[seq]], seq)
	}
	cmds := [][]string{
		{"GET", p + "ctr"},
		{"LRANGE", p + "list", "0", "-1"},
		{"HGETALL", p + "hash"},
		{"ZRANGE", p + "zset", "0", "-1", "WITHSCORES"},
		{"XRANGE", p + "xs", "-", "+"},
	}
	// The five parts of MULTI and EVAL operations, under the letters m and e.
	for _, l := range []string{"m", "e"} {
		cmds = append(cmds,
			[]string{"GET", p + l + "ctr"},
			[]string{"LRANGE", p + l + "list", "0", "-1"},
			[]string{"HGETALL", p + l + "hash"},
			[]string{"ZRANGE", p + l + "zset", "0", "-1", "WITHSCORES"})
	}
	mget := func(letter string, seqs []int) []string {
		cmd := []string{"MGET"}
		for _, s := range seqs {
			cmd = append(cmd, p+letter+strconv.Itoa(s))
		}
		return cmd
	}
	cmds = append(cmds, mget("s", byKind[opSet]), mget("m", byKind[opMulti]), mget("e", byKind[opEval]))
	// An MGET with no key is an error: give it one that never exists.
	for i := len(cmds) - 3; i < len(cmds); i++ {
		if len(cmds[i]) == 1 {
			cmds[i] = append(cmds[i], p+"none")
		}
	}
	// The JSON documents: the one of the appends and increments, and those
	// of the JSON.SETs; the sketches' counts (-1 when missing); the MULTI
	// operations' Bloom filter items.
	if l.modules {
		jmget := append(mget("j", byKind[opJSONSet]), p+"none", "$")
		jmget[0] = "JSON.MGET"
		cmds = append(cmds, []string{"JSON.GET", p + "jdoc", "$"}, jmget,
			[]string{"EVAL", "if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end return redis.call('CMS.INFO', KEYS[1])[6]", "1", p + "cms"},
			[]string{"EVAL", "if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end return redis.call('TDIGEST.INFO', KEYS[1])[14]", "1", p + "td"})
		bf := []string{"BF.MEXISTS", p + "mbf", "none"}
		for _, seq := range byKind[opMulti] {
			bf = append(bf, strconv.Itoa(seq))
		}
		cmds = append(cmds, bf)
		// The vector set's elements and their attributes, in pairs.
		cmds = append(cmds, []string{"EVAL", `local out = {}
for _, e in ipairs(redis.call('VRANGE', KEYS[1], '-', '+')) do
  out[#out+1] = e
  out[#out+1] = redis.call('VGETATTR', KEYS[1], e)
end
return out`, "1", p + "vs"})
	}
	r, err := c.pipe(cmds)
	if err != nil {
		return nil, err
	}
	for i, v := range r {
		if e, ok := v.(replyError); ok {
			return nil, fmt.Errorf("%s: %v", strings.Join(cmds[i][:2], " "), e)
		}
	}
	val := func(seq int) string { return value(l.seed, gen, conn, seq) }
	mark := func(seq int) { f.present[seq-1] = true }

	// Counters: the first n INCRs are the ones present.
	counter := func(v any, name string, limit int) int {
		if v == nil {
			return 0
		}
		n, err := strconv.Atoi(v.(string))
		if err != nil || n < 0 {
			f.torn++
			f.note("%s%s = %q", p, name, v)
			return 0
		}
		if n > limit {
			f.unexpected++
			f.note("%s%s = %d, only %d INCRs sent", p, name, n, limit)
			n = limit
		}
		return n
	}
	for _, seq := range byKind[opIncr][:counter(r[0], "ctr", len(byKind[opIncr]))] {
		mark(seq)
	}
	// A list of sequence numbers of operations of the given kinds, in order.
	listed := func(v any, name string, want opKind) map[int]bool {
		got := map[int]bool{}
		last := 0
		for _, e := range v.([]any) {
			s, _ := e.(string)
			seq, err := strconv.Atoi(s)
			switch {
			case err != nil:
				f.torn++
				f.note("%s%s holds %q", p, name, s)
			case seq < 1 || seq > sent || kinds[seq] != want:
				f.unexpected++
				f.note("%s%s holds %d, not sent", p, name, seq)
			case seq <= last:
				f.unexpected++
				f.note("%s%s holds %d after %d", p, name, seq, last)
			default:
				got[seq], last = true, seq
			}
		}
		return got
	}
	for seq := range listed(r[1], "list", opRPush) {
		mark(seq)
	}
	// A hash of f<seq> to operation seq's value.
	hashed := func(v any, name string, want opKind) map[int]bool {
		got := map[int]bool{}
		kv := v.([]any)
		for i := 0; i+1 < len(kv); i += 2 {
			field, _ := kv[i].(string)
			seq, err := strconv.Atoi(strings.TrimPrefix(field, "f"))
			switch {
			case err != nil || seq < 1 || seq > sent || kinds[seq] != want:
				f.unexpected++
				f.note("%s%s has field %q, not sent", p, name, field)
			case kv[i+1] != val(seq):
				f.torn++
				f.note("%s%s field %s is %.40q", p, name, field, kv[i+1])
			default:
				got[seq] = true
			}
		}
		return got
	}
	for seq := range hashed(r[2], "hash", opHSet) {
		mark(seq)
	}
	// A sorted set of f<seq> scored seq.
	zsetted := func(v any, name string, want opKind) map[int]bool {
		got := map[int]bool{}
		ms := v.([]any)
		for i := 0; i+1 < len(ms); i += 2 {
			member, _ := ms[i].(string)
			seq, err := strconv.Atoi(strings.TrimPrefix(member, "f"))
			switch {
			case err != nil || seq < 1 || seq > sent || kinds[seq] != want:
				f.unexpected++
				f.note("%s%s has member %q, not sent", p, name, member)
			case ms[i+1] != strconv.Itoa(seq):
				f.torn++
				f.note("%s%s member %s has score %v", p, name, member, ms[i+1])
			default:
				got[seq] = true
			}
		}
		return got
	}
	for seq := range zsetted(r[3], "zset", opZAdd) {
		mark(seq)
	}
	// The stream: entries seq <seq> v <value>, in order.
	last := 0
	for _, e := range r[4].([]any) {
		entry, _ := e.([]any)
		var fields []any
		if len(entry) == 2 {
			fields, _ = entry[1].([]any)
		}
		if len(fields) != 4 || fields[0] != "seq" || fields[2] != "v" {
			f.torn++
			f.note("%sxs entry %v", p, entry)
			continue
		}
		seq, err := strconv.Atoi(fields[1].(string))
		switch {
		case err != nil || seq < 1 || seq > sent || kinds[seq] != opXAdd || seq <= last:
			f.unexpected++
			f.note("%sxs entry %v of no operation sent (after %d)", p, entry[0], last)
		case fields[3] != val(seq):
			f.torn++
			f.note("%sxs entry %v value %.40q", p, entry[0], fields[3])
		default:
			mark(seq)
			last = seq
		}
	}
	// Strings: one key per operation.
	strs := func(v any, seqs []int, letter string) map[int]bool {
		got := map[int]bool{}
		for i, x := range v.([]any)[:len(seqs)] {
			switch {
			case x == nil:
			case x != val(seqs[i]):
				f.torn++
				f.note("%s%s%d is %.40q", p, letter, seqs[i], x)
			default:
				got[seqs[i]] = true
			}
		}
		return got
	}
	for seq := range strs(r[13], byKind[opSet], "s") {
		mark(seq)
	}
	// The sketches: the first n of their operations are present.
	sketch := func(v any, name string, k opKind) {
		n, _ := v.(int64)
		if n > int64(len(byKind[k])) {
			f.unexpected++
			f.note("%s%s counts %d, only %d %s sent", p, name, n, len(byKind[k]), opNames[k])
			n = int64(len(byKind[k]))
		}
		for _, seq := range byKind[k][:max(n, 0)] {
			mark(seq)
		}
	}
	// A MULTI's Bloom filter item is checked only when its other parts are
	// there: an absent one may test present (a false positive).
	bfHas := map[int]bool{}
	if l.modules {
		f.verifyJSON(r[16], r[17], byKind, p, val, mark, listed, counter)
		sketch(r[18], "cms", opCMS)
		sketch(r[19], "td", opTDigest)
		for i, seq := range byKind[opMulti] {
			bfHas[seq] = r[20].([]any)[1+i] == int64(1)
		}
		// The vector set: element e<seq> with the operation's value as its
		// attributes.
		pairs, _ := r[21].([]any)
		for i := 0; i+1 < len(pairs); i += 2 {
			name, _ := pairs[i].(string)
			seq, err := strconv.Atoi(strings.TrimPrefix(name, "e"))
			switch {
			case err != nil || seq < 1 || seq > sent || kinds[seq] != opVAdd:
				f.unexpected++
				f.note("%svs has element %q, not sent", p, name)
			case pairs[i+1] != val(seq):
				f.torn++
				f.note("%svs element %s has attributes %.40q", p, name, pairs[i+1])
			default:
				mark(seq)
			}
		}
	}
	// MULTI and EVAL: the five parts of each operation, all or none.
	modules := l.modules
	for j, k := range []opKind{opMulti, opEval} {
		l, base := "me"[j:j+1], 5+4*j
		parts := []map[int]bool{
			strs(r[14+j], byKind[k], l),
			listed(r[base+1], l+"list", k),
			hashed(r[base+2], l+"hash", k),
			zsetted(r[base+3], l+"zset", k),
		}
		n := 0
		for _, seq := range byKind[k] {
			have, missing := 0, []string{}
			for pi, part := range parts {
				if part[seq] {
					have++
				} else {
					missing = append(missing, partNames[pi])
				}
			}
			switch {
			case have == len(parts) && k == opMulti && modules && !bfHas[seq]:
				f.broken++
				f.note("MULTI %s%d: its Bloom filter item is missing", p, seq)
			case have == len(parts):
				mark(seq)
				n++
			case have == 0:
			default:
				f.broken++
				f.note("%s %s%d: %d of %d parts present (missing: %s)", opNames[k], p, seq, have, len(parts), strings.Join(missing, " "))
			}
		}
		if ctr := counter(r[base], l+"ctr", len(byKind[k])); ctr != n {
			f.broken++
			f.note("%s%sctr = %d but %d %s operations present", p, l, ctr, n, opNames[k])
		}
	}
	return f, nil
}

// verifyJSON checks the JSON operations' documents: jdoc, the document of
// the appends and increments, and docs, JSON.MGET's reply for the keys of
// the JSON.SET operations.
func (f *findings) verifyJSON(jdoc, docs any, byKind [numOpKinds][]int, p string, val func(int) string, mark func(int),
	listed func(any, string, opKind) map[int]bool, counter func(any, string, int) int) {
	for i, seq := range byKind[opJSONSet] {
		switch x := docs.([]any)[i]; {
		case x == nil:
		case x != `["`+val(seq)+`"]`:
			f.torn++
			f.note("%sj%d is %.40q", p, seq, x)
		default:
			mark(seq)
		}
	}
	if text, ok := jdoc.(string); ok {
		var doc []struct {
			L []int64 `json:"l"`
			N *int64  `json:"n"`
		}
		if err := json.Unmarshal([]byte(text), &doc); err != nil || len(doc) != 1 || doc[0].N == nil {
			f.torn++
			f.note("%sjdoc is %.60q", p, text)
		} else {
			l := make([]any, len(doc[0].L))
			for i, n := range doc[0].L {
				l[i] = strconv.FormatInt(n, 10)
			}
			for seq := range listed(l, "jdoc $.l", opJSONAppend) {
				mark(seq)
			}
			for _, seq := range byKind[opJSONIncr][:counter(strconv.FormatInt(*doc[0].N, 10), "jdoc $.n", len(byKind[opJSONIncr]))] {
				mark(seq)
			}
		}
	}
}
