package server_test

import (
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestStreamNotifications compares the keyspace events of the stream
// commands, names and order, with redis-server's: after each command a
// marker is published, and the events are read up to it.
func TestStreamNotifications(t *testing.T) {
	p := difftest.StartIsolated(t, "--notify-keyspace-events", "KEA")
	sub := p.NewConn()
	sub.Do("PSUBSCRIBE", "__key*@0__:*")
	for _, cmd := range [][]any{
		{"XADD", "s", "1-0", "f", "v"},
		{"XADD", "s", "MAXLEN", 1, "2-0", "f", "v"},
		{"XADD", "s", "MAXLEN", 5, "3-0", "f", "v"},
		{"XADD", "s", "1-0", "f", "v"},
		{"XADD", "s2", "NOMKSTREAM", "1-0", "f", "v"},
		{"XDEL", "s", "2-0", "9-0"},
		{"XDEL", "s", "9-0"},
		{"XTRIM", "s", "MAXLEN", 0},
		{"XTRIM", "s", "MAXLEN", 0},
		{"XSETID", "s", "10-0"},
		{"XGROUP", "CREATE", "s", "g", "$"},
		{"XGROUP", "CREATE", "new", "g", "$", "MKSTREAM"},
		{"XGROUP", "CREATECONSUMER", "s", "g", "c"},
		{"XGROUP", "CREATECONSUMER", "s", "g", "c"},
		{"XGROUP", "SETID", "s", "g", "0"},
		{"XADD", "s", "11-0", "f", "v"},
		{"XREADGROUP", "GROUP", "g", "reader", "STREAMS", "s", ">"},
		{"XCLAIM", "s", "g", "claimer", 0, "11-0"},
		{"XAUTOCLAIM", "s", "g", "autoclaimer", 0, "0"},
		{"XACK", "s", "g", "11-0"},
		{"XGROUP", "DELCONSUMER", "s", "g", "c"},
		{"XGROUP", "DELCONSUMER", "s", "g", "c"},
		{"XGROUP", "DESTROY", "s", "g"},
		{"XRANGE", "nokey", "-", "+"},
		{"XLEN", "nokey"},
	} {
		p.Do(cmd...)
		p.Do("PUBLISH", "__keyevent@0__:marker", "end")
		for {
			if r := sub.Read(); strings.Contains(r.String(), "marker") {
				break
			}
		}
	}
}
