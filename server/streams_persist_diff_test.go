package server_test

// Differential tests of DUMP and RESTORE of streams, corrupt payloads
// included.

import (
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestStreamDumpRestore compares the payloads of streams made by the same
// commands (no consumers: their seen times are each server's clock) and
// restores them on both servers.
func TestStreamDumpRestore(t *testing.T) {
	p := difftest.Start(t)
	p.Do("DEL", "s", "e", "r")
	p.Do("XADD", "s", "1-1", "a", "1", "b", "two")
	p.Do("XADD", "s", "1-2", "a", "-3", "b", "4")
	p.Do("XADD", "s", "2-0", "c", "12345678901234567890")
	p.Do("XDEL", "s", "1-2")
	p.Do("XGROUP", "CREATE", "s", "g", "1-1", "ENTRIESREAD", "1")
	p.Do("XGROUP", "CREATE", "s", "123", "$")
	p.Do("XGROUP", "CREATE", "e", "g", "$", "MKSTREAM")
	for _, key := range []string{"s", "e"} {
		payload := p.Do("DUMP", key)
		p.Do("RESTORE", "r", "0", payload.Str, "REPLACE")
		p.Do("XINFO", "STREAM", "r", "FULL")
		p.Do("DUMP", "r")
		p.Do("RESTORE", "r", "0", payload.Str)
		p.Do("RESTORE", "r", "0", payload.Str[:len(payload.Str)-1]+"x", "REPLACE")
	}
	p.Do("DEL", "s", "e", "r")
}

// TestStreamRestoreCorrupt restores a stream payload (with a group, a
// consumer and pending entries) truncated at every length, and with
// corruptions Redis's deep check (sanitize-dump-payload yes) finds, the
// footer made right: both servers refuse them with "Bad data format".
// Keyhive always checks deeply, and more strictly: it also refuses what
// would break its invariants (IDs out of order, a length or last ID that
// disagrees with the entries), which Redis restores; FuzzRestore covers
// every byte for panics.
func TestStreamRestoreCorrupt(t *testing.T) {
	p := difftest.StartIsolated(t, "--sanitize-dump-payload", "yes")
	p.Do("XADD", "s", "1-1", "a", "1", "b", "two")
	p.Do("XADD", "s", "1-2", "a", "3", "b", "4")
	p.Do("XADD", "s", "5-0", "other", "x")
	p.Do("XDEL", "s", "1-1")
	p.Do("XGROUP", "CREATE", "s", "g", "0")
	p.Do("XCLAIM", "s", "g", "c", "0", "1-2", "TIME", "1700000000000", "RETRYCOUNT", "2", "FORCE", "JUSTID")
	p.Do("XCLAIM", "s", "g", "c", "0", "5-0", "TIME", "1700000000001", "RETRYCOUNT", "1", "FORCE", "JUSTID")
	dump := p.Redis().Do("DUMP", "s").Str
	body := dump[:len(dump)-10]
	for n := 1; n < len(body); n++ {
		p.Do("RESTORE", "r", "0", withDumpFooter(body[:n], 10), "REPLACE")
	}
	corrupt := func(from, to string) string {
		t.Helper()
		if !strings.Contains(body, from) {
			t.Fatalf("%q not in the payload %q", from, body)
		}
		return strings.Replace(body, from, to, 1)
	}
	for _, b := range []string{
		corrupt("\x01\x10", "\x01\x0f"),                                                          // node key not 16 bytes
		corrupt("\x83two\x04", "\x83two\x05"),                                                    // lp-count wrong
		corrupt("\x01\x01g", "\x02\x01g"),                                                        // group count beyond the data
		corrupt("\x02\x01\x81a", "\x03\x01\x81a"),                                                // master field count
		body[:len(body)-16] + "\x00\x00\x00\x00\x00\x00\x00\x09\x00\x00\x00\x00\x00\x00\x00\x00", // consumer's ID not in the PEL
	} {
		if r := p.Do("RESTORE", "r", "0", withDumpFooter(b, 10), "REPLACE"); r.Str != "ERR Bad data format" {
			t.Errorf("corrupt payload %q restored: %v", b, r)
		}
	}
	p.Do("EXISTS", "r")
}
