package family

import (
	"fmt"
	"testing"
)

// TestHashSubkeyEvents: each hash command of the subkey notifications page
// (https://redis.io/docs/latest/develop/pubsub/subkeyspace-notifications/,
// "Supported commands") names the fields it touched, per event, in the
// payload's <len>:<subkey> form; nothing when no subkey channel is on.
func TestHashSubkeyEvents(t *testing.T) {
	f := newFixture(t)
	f.run(t, "HSET", "h", "a", "1")
	if len(f.conn.subkeys) != 0 {
		t.Fatalf("subkey events with every subkey channel off: %q", f.conn.subkeys)
	}
	f.host.subkeys = true
	steps := []struct {
		args []string
		want string
	}{
		{[]string{"HSET", "h", "f1", "v", "field,2", "w"}, `["hset h 2:f1,7:field,2"]`},
		{[]string{"HSETNX", "h", "f1", "x"}, `[]`},
		{[]string{"HSETNX", "h", "n", "x"}, `["hset h 1:n"]`},
		{[]string{"HINCRBY", "h", "c", "2"}, `["hincrby h 1:c"]`},
		{[]string{"HINCRBYFLOAT", "h", "c", "0.5"}, `["hincrbyfloat h 1:c"]`},
		{[]string{"HDEL", "h", "n", "missing", "n"}, `["hdel h 1:n"]`},
		{[]string{"HEXPIRE", "h", "100", "FIELDS", "3", "a", "f1", "missing"}, `["hexpire h 1:a,2:f1"]`},
		{[]string{"HPERSIST", "h", "FIELDS", "2", "a", "c"}, `["hpersist h 1:a"]`},
		{[]string{"HGETEX", "h", "PX", "5", "FIELDS", "1", "c"}, `["hexpire h 1:c"]`},
		{[]string{"HGETDEL", "h", "FIELDS", "2", "a", "missing"}, `["hdel h 1:a"]`},
		{[]string{"HSETEX", "h", "PX", "10", "FIELDS", "1", "s", "v"}, `["hset h 1:s" "hexpire h 1:s"]`},
		{[]string{"HEXPIREAT", "h", "1", "FIELDS", "1", "f1"}, `["hdel h 2:f1"]`},
	}
	for _, s := range steps {
		f.conn.subkeys = nil
		f.run(t, s.args...)
		if got := fmt.Sprintf("%q", f.conn.subkeys); got != s.want {
			t.Errorf("%q: subkey events %s, want %s", s.args, got, s.want)
		}
	}
	// Fields past their time go lazily, with one batched hexpired.
	f.conn.subkeys = nil
	f.run(t, "HSET", "e", "x", "1", "y", "2", "z", "3")
	f.run(t, "HPEXPIREAT", "e", "1000001", "FIELDS", "2", "x", "y")
	f.now = 1_000_002
	f.conn.subkeys = nil
	f.run(t, "HMGET", "e", "x", "y", "z")
	if got := fmt.Sprintf("%q", f.conn.subkeys); got != `["hexpired e 1:x,1:y"]` {
		t.Errorf("HMGET of expired fields: subkey events %s", got)
	}
}
