package crashtest

import (
	"fmt"
	"hash/crc32"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The load: every connection writes keys of its own (prefix g<gen>:c<conn>:)
// one operation at a time, operation n+1 only after n's reply. Everything an
// operation writes is a function of (seed, gen, conn, seq), so after the
// restart the verifier can tell, for every operation, whether its effects are
// there, and a connection's surviving operations must be 1..L for some L.

type opKind uint8

const (
	opSet        opKind = iota // SET g:c:s<seq> value (a key per operation)
	opIncr                     // INCR g:c:ctr
	opRPush                    // RPUSH g:c:list <seq>
	opHSet                     // HSET g:c:hash f<seq> value
	opZAdd                     // ZADD g:c:zset <seq> f<seq>
	opXAdd                     // XADD g:c:xs * seq <seq> v value
	opMulti                    // MULTI: SET m<seq>, INCR mctr, RPUSH mlist, HSET mhash, ZADD mzset, BF.ADD mbf <seq>; EXEC
	opEval                     // EVAL of the same five writes on e<seq>, ectr, elist, ehash, ezset
	opJSONSet                  // JSON.SET g:c:j<seq> $ "value" (a key per operation)
	opJSONAppend               // JSON.ARRAPPEND g:c:jdoc $.l <seq> (after JSON.SET ... NX of the document)
	opJSONIncr                 // JSON.NUMINCRBY g:c:jdoc $.n 1 (likewise)
	opCMS                      // CMS.INCRBY g:c:cms <seq> 1 (the sketch made as the connection starts)
	opTDigest                  // TDIGEST.ADD g:c:td <seq> (likewise)
	opVAdd                     // VADD g:c:vs VALUES 2 <seq> 1 e<seq> SETATTR value (an element per operation)
	numOpKinds
)

var opNames = [...]string{"SET", "INCR", "RPUSH", "HSET", "ZADD", "XADD", "MULTI", "EVAL",
	"JSON.SET", "JSON.ARRAPPEND", "JSON.NUMINCRBY", "CMS.INCRBY", "TDIGEST.ADD", "VADD"}

// jsonDoc is the document the JSON operations of a connection update,
// created by the first of them.
const jsonDoc = `{"l":[],"n":0}`

// evalScript writes five keys; it must take effect entirely or not at all.
const evalScript = `redis.call('SET', KEYS[1], ARGV[1])
redis.call('INCR', KEYS[2])
redis.call('RPUSH', KEYS[3], ARGV[2])
redis.call('HSET', KEYS[4], ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[5], ARGV[2], ARGV[3])
return 1`

// mix64 is splitmix64's finaliser: a cheap, well-spread hash of the inputs.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

func opHash(seed int64, gen, conn, seq int) uint64 {
	return mix64(uint64(seed) ^ mix64(uint64(gen)<<40^uint64(conn)<<32^uint64(seq)))
}

// load is what decides the operations: the seed, and whether they include
// those of Redis 8's module types, JSON, the probabilistic types and vector sets
// (Keyhive's; Redis 7 lacks them), the kinds from opJSONSet on.
type load struct {
	seed    int64
	modules bool
}

func kindOf(l load, gen, conn, seq int) opKind {
	kinds := numOpKinds
	if !l.modules {
		kinds = opJSONSet
	}
	return opKind(opHash(l.seed, gen, conn, seq) % uint64(kinds))
}

// value is operation seq's self-describing value: who wrote it, a payload
// of 8 to 1032 bytes, and the CRC of all that, so that a value cut short or
// holding another write's bytes is recognised.
func value(seed int64, gen, conn, seq int) string {
	h := opHash(seed, gen, conn, seq)
	n := 8 + int(h>>8%1025)
	payload := make([]byte, n)
	for i := range payload {
		payload[i] = 'a' + byte((h>>(i%56))+uint64(i))%26
	}
	s := fmt.Sprintf("v:%d:%d:%d:%s", gen, conn, seq, payload)
	return s + ":" + strconv.FormatUint(uint64(crc32.ChecksumIEEE([]byte(s))), 16)
}

func prefix(gen, conn int) string { return "g" + strconv.Itoa(gen) + ":c" + strconv.Itoa(conn) + ":" }

// commands returns the requests of operation seq, sent at once (a pipelined
// MULTI ... EXEC), and how many replies precede the one that acknowledges it.
func commands(l load, gen, conn, seq int) [][]string {
	p, s, v := prefix(gen, conn), strconv.Itoa(seq), value(l.seed, gen, conn, seq)
	f := "f" + s
	switch kindOf(l, gen, conn, seq) {
	case opSet:
		return [][]string{{"SET", p + "s" + s, v}}
	case opIncr:
		return [][]string{{"INCR", p + "ctr"}}
	case opRPush:
		return [][]string{{"RPUSH", p + "list", s}}
	case opHSet:
		return [][]string{{"HSET", p + "hash", f, v}}
	case opZAdd:
		return [][]string{{"ZADD", p + "zset", s, f}}
	case opXAdd:
		return [][]string{{"XADD", p + "xs", "*", "seq", s, "v", v}}
	case opMulti:
		cmds := [][]string{{"MULTI"},
			{"SET", p + "m" + s, v},
			{"INCR", p + "mctr"},
			{"RPUSH", p + "mlist", s},
			{"HSET", p + "mhash", f, v},
			{"ZADD", p + "mzset", s, f}}
		if l.modules {
			cmds = append(cmds, []string{"BF.ADD", p + "mbf", s})
		}
		return append(cmds, []string{"EXEC"})
	case opJSONSet:
		return [][]string{{"JSON.SET", p + "j" + s, "$", `"` + v + `"`}}
	case opJSONAppend:
		return [][]string{{"JSON.SET", p + "jdoc", "$", jsonDoc, "NX"}, {"JSON.ARRAPPEND", p + "jdoc", "$.l", s}}
	case opJSONIncr:
		return [][]string{{"JSON.SET", p + "jdoc", "$", jsonDoc, "NX"}, {"JSON.NUMINCRBY", p + "jdoc", "$.n", "1"}}
	case opCMS:
		return [][]string{{"CMS.INCRBY", p + "cms", s, "1"}}
	case opTDigest:
		return [][]string{{"TDIGEST.ADD", p + "td", s}}
	case opVAdd:
		return [][]string{{"VADD", p + "vs", "VALUES", "2", s, "1", "e" + s, "SETATTR", v}}
	default: // opEval
		return [][]string{{"EVAL", evalScript, "5", p + "e" + s, p + "ectr", p + "elist", p + "ehash", p + "ezset", v, s, f}}
	}
}

// connLog is what one connection sent and which replies it received.
type connLog struct {
	sent  int     // operations 1..sent were sent; the last may be in flight
	acked int     // operations 1..acked were acknowledged (sent or sent-1)
	ackAt []int64 // ackAt[i-1]: when operation i's reply arrived (Unix ns)
	err   string  // an error reply that stopped the connection (then sent == acked)
}

// runWorker writes operations until the connection breaks (the kill) or stop
// is closed. An error reply stops it too: the refused operation is taken
// back (it must not be in the data).
func runWorker(addr string, l load, gen, conn int, stop <-chan struct{}, log *connLog, ops *atomic.Int64) {
	c, err := dial(addr, 2*time.Second)
	if err != nil {
		log.err = "dial: " + err.Error()
		return
	}
	defer c.close()
	// The sketches CMS.INCRBY and TDIGEST.ADD count into, before any
	// operation: their counts tell which operations are present.
	if l.modules {
		p := prefix(gen, conn)
		replies, err := c.pipe([][]string{{"CMS.INITBYDIM", p + "cms", "16", "4"}, {"TDIGEST.CREATE", p + "td"}})
		if err != nil {
			return
		}
		if msg := replyErr(replies); msg != "" {
			log.err = "creating the sketches: " + msg
			return
		}
	}
	for seq := 1; ; seq++ {
		select {
		case <-stop:
			return
		default:
		}
		cmds := commands(l, gen, conn, seq)
		log.sent = seq
		replies, err := c.pipe(cmds)
		if err != nil {
			return // in flight: may or may not be in the data
		}
		if msg := replyErr(replies); msg != "" {
			log.sent = seq - 1
			log.err = fmt.Sprintf("%s refused: %s", opNames[kindOf(l, gen, conn, seq)], msg)
			return
		}
		log.acked = seq
		log.ackAt = append(log.ackAt, time.Now().UnixNano())
		ops.Add(1)
	}
}

// replyErr returns the first error among an operation's replies (EXEC's
// own replies included).
func replyErr(replies []any) string {
	for _, r := range replies {
		switch r := r.(type) {
		case replyError:
			return string(r)
		case []any:
			if m := replyErr(r); m != "" {
				return m
			}
		}
	}
	return ""
}

// runLoad starts conns workers for generation gen and returns a function that
// waits for them all (they end when the server dies or stop is closed).
func runLoad(addr string, l load, gen, conns int, stop <-chan struct{}, ops *atomic.Int64) ([]connLog, func()) {
	logs := make([]connLog, conns)
	var wg sync.WaitGroup
	for i := range logs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runWorker(addr, l, gen, i, stop, &logs[i], ops)
		}()
	}
	return logs, wg.Wait
}
