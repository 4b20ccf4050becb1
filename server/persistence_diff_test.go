package server_test

// Differential tests of DUMP, RESTORE, SAVE, BGSAVE and LASTSAVE replies,
// errors included.

import (
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestRestorePayloadVersions: payloads of RDB versions up to 12 restore, as
// in Redis 7.4 (7.0 refuses those above 10).
func TestRestorePayloadVersions(t *testing.T) {
	p := difftest.Start74(t)
	for _, version := range []uint16{9, 10, 11, 12, 13} {
		p.Do("RESTORE", "k", "0", withDumpFooter("\x00\x05value", version), "REPLACE")
		p.Do("GET", "k")
	}
}

func TestDumpRestoreErrors(t *testing.T) {
	p := difftest.Start(t)
	p.Do("SET", "s", "value")
	payload := p.Do("DUMP", "s").Str
	p.Do("DUMP", "missing")
	p.Do("DUMP")
	p.Do("DUMP", "a", "b")
	p.Do("RESTORE", "k", "0")
	// Options in Redis's order of checks: syntax and values first, then the
	// existing key, then the TTL, then the payload.
	p.Do("RESTORE", "s", "0", payload)
	p.Do("RESTORE", "s", "0", payload, "BADOPTION")
	p.Do("RESTORE", "k", "0", payload, "IDLETIME")
	p.Do("RESTORE", "k", "0", payload, "IDLETIME", "-1")
	p.Do("RESTORE", "k", "0", payload, "IDLETIME", "abc")
	p.Do("RESTORE", "k", "0", payload, "FREQ", "256")
	p.Do("RESTORE", "k", "0", payload, "FREQ", "-1")
	p.Do("RESTORE", "k", "0", payload, "FREQ", "x")
	p.Do("RESTORE", "k", "0", payload, "FREQ", "1", "IDLETIME", "1")
	p.Do("RESTORE", "k", "0", payload, "IDLETIME", "1", "FREQ", "1")
	p.Do("RESTORE", "k", "abc", payload)
	p.Do("RESTORE", "k", "-1", payload)
	p.Do("RESTORE", "s", "-1", payload)
	p.Do("RESTORE", "k", "0", "")
	p.Do("RESTORE", "k", "0", "short")
	p.Do("RESTORE", "k", "0", payload[:len(payload)-1]+"X")
	p.Do("RESTORE", "k", "0", "X"+payload[1:])
	p.Do("RESTORE", "k", "0", withDumpFooter("\x00\x05value", 9))
	p.Do("GET", "k")
	p.Do("DEL", "k")
	// Checksums right, contents wrong.
	p.Do("RESTORE", "k", "0", withDumpFooter("", 10))
	p.Do("RESTORE", "k", "0", withDumpFooter("\x08\x05value", 10))
	p.Do("RESTORE", "k", "0", withDumpFooter("\x00\x09value", 10)) // a string running into the footer
	p.Do("STRLEN", "k")
	p.Do("DEL", "k")
	p.Do("RESTORE", "k", "0", withDumpFooter("\x00\x7fvalue", 10))            // running past the end
	p.Do("RESTORE", "k", "0", withDumpFooter("\x02\x00", 10))                 // an empty set
	p.Do("RESTORE", "k", "0", withDumpFooter("\x02\x02\x01a\x01a", 10))       // a duplicate member
	p.Do("RESTORE", "k", "0", withDumpFooter("\x0b\x04\x02\x00\x00\x00", 10)) // a truncated intset
	p.Do("RESTORE", "k", "0", withDumpFooter("\x10\x03abc", 10))              // not a listpack
	p.Do("EXISTS", "k")
	// A bad value with REPLACE leaves the old key alone.
	p.Do("SET", "k", "old")
	p.Do("RESTORE", "k", "0", withDumpFooter("\x02\x02\x01a\x01a", 10), "REPLACE")
	p.Do("GET", "k")
	const dupField = "Redis 7.0 (without sanitize-dump-payload) keeps a small hash with a duplicate field as a corrupt listpack; Keyhive rejects it"
	p.DoDifferent(dupField, "RESTORE", "k", "0", withDumpFooter("\x04\x02\x01f\x01v\x01f\x01w", 10), "REPLACE")
	p.DoDifferent(dupField, "GET", "k")
	// Old encodings Redis still loads: a ziplist list and a zset v1.
	p.Do("RESTORE", "zl", "0", withDumpFooter("\x0a\x10\x10\x00\x00\x00\x0d\x00\x00\x00\x02\x00\x00\x01a\x03\xf2\xff", 10))
	p.Do("LRANGE", "zl", "0", "-1")
	p.Do("RESTORE", "z1", "0", withDumpFooter("\x03\x02\x01a\x031.5\x01b\xfe", 10))
	p.Do("ZRANGE", "z1", "0", "-1", "WITHSCORES")
	p.Do("RESTORE", "zm", "0", withDumpFooter("\x09\x0e\x02\x01f\x01\x00v\x02ab\x02\x00xy\xff", 10))
	p.DoUnorderedPairs("HGETALL", "zm")
	p.Do("RESTORE", "hz", "0", withDumpFooter("\x0d\x11\x11\x00\x00\x00\x0d\x00\x00\x00\x02\x00\x00\x01f\x03\x01v\xff", 10))
	p.Do("HGETALL", "hz")
	p.Do("RESTORE", "zz", "0", withDumpFooter("\x0c\x10\x10\x00\x00\x00\x0d\x00\x00\x00\x02\x00\x00\x01m\x03\xf3\xff", 10))
	p.Do("ZRANGE", "zz", "0", "-1", "WITHSCORES")
}

func TestRestoreTTLAndOptions(t *testing.T) {
	p := difftest.Start(t)
	p.Do("RPUSH", "l", "a", "b", "c")
	payload := p.Do("DUMP", "l").Str
	p.Do("RESTORE", "l2", "100000", payload)
	p.DoApprox(1, "TTL", "l2")
	p.Do("LRANGE", "l2", "0", "-1")
	p.Do("RESTORE", "l2", "0", payload, "REPLACE")
	p.Do("TTL", "l2")
	p.Do("RESTORE", "l3", "4102444800000", payload, "ABSTTL")
	p.Do("PEXPIRETIME", "l3")
	// An absolute time in the past: nothing is created; with REPLACE the
	// old key is deleted.
	p.Do("RESTORE", "l4", "1000", payload, "ABSTTL")
	p.Do("EXISTS", "l4")
	p.Do("RESTORE", "l3", "1000", payload, "ABSTTL", "REPLACE")
	p.Do("EXISTS", "l3")
	p.Do("SET", "str", "x")
	p.Do("RESTORE", "str", "0", payload, "REPLACE", "IDLETIME", "1000")
	p.Do("TYPE", "str")
	p.DoApprox(2, "OBJECT", "IDLETIME", "str")
	p.Do("RESTORE", "str2", "0", payload, "FREQ", "100")
	p.Do("OBJECT", "FREQ", "str2")
	p.Do("RESTORE", "str3", "0", payload, "replace", "absttl", "idletime", "5")
	p.DoApprox(2, "OBJECT", "IDLETIME", "str3")
	p.Do("TYPE", "str3")
	// RESTORE turns into a key holding the value, with WRONGTYPE as usual.
	p.Do("GET", "l2")
}

func TestRestoreFreqUnderLFU(t *testing.T) {
	p := difftest.StartIsolated(t, "--maxmemory-policy", "allkeys-lfu")
	p.Do("SET", "s", "v")
	payload := p.Do("DUMP", "s").Str
	p.Do("RESTORE", "f", "0", payload, "FREQ", "100")
	p.Do("OBJECT", "FREQ", "f")
	p.Do("RESTORE", "i", "0", payload, "IDLETIME", "100")
	p.Do("OBJECT", "FREQ", "i")
}

func TestSaveCommands(t *testing.T) {
	p := difftest.StartIsolated(t)
	p.Do("SET", "k", "v")
	p.Do("SAVE")
	p.Do("SAVE", "extra")
	p.Do("BGSAVE", "NOW")
	p.Do("BGSAVE", "SCHEDULE", "extra")
	p.Do("LASTSAVE", "x")
	before := time.Now().Unix()
	for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		if r := c.Do("LASTSAVE"); r.Int < before-2 || r.Int > before+2 {
			t.Errorf("%s: LASTSAVE %d, now %d", c.Name(), r.Int, before)
		}
	}
	p.Do("BGSAVE")
	waitBgsave(t, p)
	p.Do("MULTI")
	p.Do("BGSAVE")
	p.Do("EXEC")
	waitBgsave(t, p)
	p.Do("MULTI")
	p.Do("SAVE")
	p.Do("DISCARD")
	p.Do("DEBUG", "RELOAD", "BADOPTION")
	p.Do("DEBUG", "RELOAD")
	p.Do("GET", "k")
	p.Do("DEBUG", "RELOAD", "NOSAVE", "NOFLUSH", "MERGE")
	p.Do("GET", "k")
}

// waitBgsave waits for both servers to finish background saving.
func waitBgsave(t *testing.T, p *difftest.Pair) {
	t.Helper()
	for _, c := range []*difftest.Client{p.Redis(), p.Keyhive()} {
		deadline := time.Now().Add(10 * time.Second)
		for {
			info := c.Do("INFO", "persistence").Str
			if strings.Contains(info, "rdb_bgsave_in_progress:0") && !strings.Contains(info, "rdb_changes_since_last_save:1\r") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: background save did not finish: %s", c.Name(), info)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func TestRestoreEvents(t *testing.T) {
	w := watchEvents(t, 2, "KEA")
	w.do("RPUSH", "l", "a", "b")
	payload := w.p.Do("DUMP", "l").Str
	w.do("RESTORE", "l2", "0", payload)
	w.do("RESTORE", "l2", "0", payload, "REPLACE")
	w.do("RESTORE", "l2", "1000", payload, "REPLACE", "ABSTTL")
	w.do("RESTORE", "l3", "1000", payload, "ABSTTL")
	w.do("RESTORE", "l", "0", payload)
}
