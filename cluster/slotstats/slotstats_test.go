package slotstats

import (
	"testing"

	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/resp"
)

// fakeHost serves slots 0-2 and holds one key in slot 1 (100 bytes) and
// two in slot 2 (10 bytes each).
type fakeHost struct{}

func (fakeHost) Serves(slot int) bool { return slot <= 2 }

func (fakeHost) EachKey(shard int, fn func(slot int, memory func() uint64)) {
	for _, k := range []struct {
		slot int
		mem  uint64
	}{{1, 100}, {2, 10}, {2, 10}} {
		if k.slot%keyspace.Shards == shard {
			fn(k.slot, func() uint64 { return k.mem })
		}
	}
}

func TestCommand(t *testing.T) {
	var c Counters
	c.Open()
	c.Record(2, 5000, 7, 9)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cluster", "slot-stats", "slotsrange", "0", "5"},
			"*3\r\n*2\r\n:0\r\n%1\r\n$9\r\nkey-count\r\n:0\r\n*2\r\n:1\r\n%1\r\n$9\r\nkey-count\r\n:1\r\n*2\r\n:2\r\n%1\r\n$9\r\nkey-count\r\n:2\r\n"},
		{[]string{"cluster", "slot-stats", "orderby", "key-count", "limit", "1"},
			"*1\r\n*2\r\n:2\r\n%1\r\n$9\r\nkey-count\r\n:2\r\n"},
		{[]string{"cluster", "slot-stats", "orderby", "cpu-usec"}, "-ERR Unrecognized sort metric for ORDERBY.\r\n"},
		{[]string{"cluster", "slot-stats", "slotsrange", "3", "1"}, "-ERR Start slot number 3 is greater than end slot number 1\r\n"},
		{[]string{"cluster", "slot-stats", "slotsrange", "0", "16384"}, "-ERR Invalid or out of range slot\r\n"},
	} {
		w := resp.Writer{Proto: 3}
		argv := make([][]byte, len(tc.args))
		for i, a := range tc.args {
			argv[i] = []byte(a)
		}
		c.Command(&w, argv, fakeHost{})
		if string(w.B) != tc.want {
			t.Errorf("%v:\n got %q\nwant %q", tc.args, w.B, tc.want)
		}
	}
	c.SetOn(true)
	w := resp.Writer{Proto: 3}
	c.Command(&w, [][]byte{[]byte("cluster"), []byte("slot-stats"), []byte("orderby"), []byte("memory-bytes"), []byte("limit"), []byte("1")}, fakeHost{})
	want := "*1\r\n*2\r\n:1\r\n%5\r\n$9\r\nkey-count\r\n:1\r\n$8\r\ncpu-usec\r\n:0\r\n$12\r\nmemory-bytes\r\n:100\r\n$16\r\nnetwork-bytes-in\r\n:0\r\n$17\r\nnetwork-bytes-out\r\n:0\r\n"
	if string(w.B) != want {
		t.Errorf("ORDERBY memory-bytes LIMIT 1:\n got %q\nwant %q", w.B, want)
	}
	c.Reset(func(slot int) bool { return slot == 2 })
	if cpu, in, out := c.Load(2); cpu != 0 || in != 0 || out != 0 {
		t.Errorf("after Reset: %d %d %d", cpu, in, out)
	}
}
