package replication

import (
	"bufio"
	"bytes"
	"io"
	"testing"
)

// FuzzStream feeds a replica's reader what a master might send after PSYNC:
// the answer line, an RDB transfer on a full resync, then commands. Bad
// input must end in an error, never a panic or a hang.
func FuzzStream(f *testing.F) {
	mark := bytes.Repeat([]byte("m"), EOFMarkLen)
	f.Add([]byte("+CONTINUE\r\n*1\r\n$4\r\nPING\r\n"))
	f.Add([]byte("+FULLRESYNC 0123456789012345678901234567890123456789 42\r\n\n\n$5\r\nREDIS*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n"))
	f.Add(append(append([]byte("+FULLRESYNC 0123456789012345678901234567890123456789 0\r\n$EOF:"+string(mark)+"\r\nREDIS0010"), mark...), "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n"...))
	f.Add([]byte("-ERR unknown command 'PSYNC'\r\n"))
	f.Add([]byte("+CONTINUE 0123456789012345678901234567890123456789\r\n*2\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bufio.NewReader(bytes.NewReader(data))
		line, err := ReadLine(r)
		if err != nil {
			return
		}
		reply, err := ParseSyncReply(line)
		if err != nil {
			return
		}
		if reply.Full {
			if _, err := ReadRDB(r, io.Discard); err != nil {
				return
			}
		}
		cr := NewCommandReader(r, 1<<20)
		total := 0
		for {
			_, raw, err := cr.Next()
			if err != nil {
				break
			}
			if len(raw) == 0 {
				t.Fatal("a command of no bytes")
			}
			total += len(raw)
		}
		if total > len(data) {
			t.Fatalf("commands of %d bytes in %d bytes of input", total, len(data))
		}
	})
}
