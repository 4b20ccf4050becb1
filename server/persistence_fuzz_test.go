package server

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"os"
	"testing"

	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/persistence"
)

// FuzzRestore runs RESTORE on arbitrary payloads, with the footer's
// checksum made right so the value decoder and the building of every type
// are reached: whatever the payload, the server replies without panicking,
// and a restored key reads back and dumps to a payload that restores the
// same.
func FuzzRestore(f *testing.F) {
	data, err := os.ReadFile("../persistence/testdata/redis-7.0-dump-payloads.bin")
	if err != nil {
		f.Fatal(err)
	}
	for len(data) >= 4 { // redis-server 7.0's payloads: length, payload
		n := binary.LittleEndian.Uint32(data)
		f.Add(data[4 : 4+n-10]) // the value, without the footer
		data = data[4+n:]
	}
	cfg, err := config.FromArgs([]string{"--port", "0", "--dir", f.TempDir()})
	if err != nil {
		f.Fatal(err)
	}
	s, err := New(cfg)
	if err != nil {
		f.Fatal(err)
	}
	local, remote := net.Pipe()
	defer local.Close()
	defer remote.Close()
	go io.Copy(io.Discard, remote) // a large reply is written out
	runOn := func(c *Client, args ...string) []byte {
		argv := make([][]byte, len(args))
		for i, a := range args {
			argv[i] = []byte(a)
		}
		c.out.B = c.out.B[:0]
		c.execute(argv)
		return bytes.Clone(c.out.B)
	}
	// Streams: nodes with deleted entries, an emptied one, groups with a
	// PEL and consumers with and without pending entries.
	c := s.newClient(local)
	for _, cmd := range [][]string{
		{"CONFIG", "SET", "stream-node-max-entries", "3"},
		{"XADD", "s", "1-1", "a", "1", "b", "x"}, {"XADD", "s", "1-2", "a", "2", "b", "y"},
		{"XADD", "s", "2-0", "c", "-3"}, {"XADD", "s", "3-0", "a", "12345678901234"},
		{"XDEL", "s", "1-2"}, {"XGROUP", "CREATE", "s", "g", "0"},
		{"XREADGROUP", "GROUP", "g", "alice", "COUNT", "2", "STREAMS", "s", ">"},
		{"XGROUP", "CREATECONSUMER", "s", "g", "bob"}, {"XGROUP", "CREATE", "s", "h", "$"},
		{"XADD", "e", "1-1", "f", "v"}, {"XDEL", "e", "1-1"},
	} {
		runOn(c, cmd...)
	}
	for _, key := range []string{"s", "e"} {
		dump := runOn(c, "DUMP", key)
		i := bytes.IndexByte(dump, '\n')
		f.Add(dump[i+1 : len(dump)-2-10])
	}
	runOn(c, "FLUSHALL")
	f.Fuzz(func(t *testing.T, value []byte) {
		c := s.newClient(local)
		payload := persistence.AppendDumpFooter(bytes.Clone(value))
		run := func(args ...string) []byte { return runOn(c, args...) }
		if reply := run("RESTORE", "k", "0", string(payload), "REPLACE"); string(reply) != "+OK\r\n" {
			return
		}
		for _, cmd := range [][]string{{"TYPE", "k"}, {"OBJECT", "ENCODING", "k"}, {"LRANGE", "k", "0", "-1"},
			{"SMEMBERS", "k"}, {"ZRANGE", "k", "0", "-1", "WITHSCORES"}, {"HGETALL", "k"}, {"GET", "k"},
			{"XRANGE", "k", "-", "+"}, {"XREVRANGE", "k", "+", "-"}, {"XINFO", "STREAM", "k", "FULL"},
			{"XADD", "k", "*", "a", "b"}, {"XTRIM", "k", "MAXLEN", "1"}} {
			run(cmd...)
		}
		dump := run("DUMP", "k")
		i := bytes.IndexByte(dump, '\n')
		again := string(dump[i+1 : len(dump)-2])
		if reply := run("RESTORE", "k2", "0", again, "REPLACE"); string(reply) != "+OK\r\n" {
			t.Fatalf("Keyhive's own DUMP does not restore: %q", reply)
		}
	})
}
