package server_test

import (
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestGoRedisSubkeyNotificationSpecs runs go-redis v9.22.0's spec of Redis
// 8.8's subkey notifications (pubsub_test.go, "should receive hash field
// subkey notifications": HSET, HPEXPIRE and the field's expiry on
// __subkeyevent@0__) against Keyhive as Redis 8.8.
func TestGoRedisSubkeyNotificationSpecs(t *testing.T) {
	runGoRedisSpecsAs(t, goRedisRun{file: "pubsub_test.go", version: "8.8", focus: "subkey notifications"})
}

// TestSubkeyNotifications: Redis 8.8's four subkey channels and their
// payloads, from the subkey notifications page
// (https://redis.io/docs/latest/develop/pubsub/subkeyspace-notifications/),
// over RESP2 and RESP3 subscribers. The page's example prints
// "7:field1" for the 6-byte field1; go-redis's spec and the page's format
// (<len>:<subkey>) say 6, which is what is expected here.
func TestSubkeyNotifications(t *testing.T) {
	skipOnRedisTarget(t)
	p := difftest.Start(t)
	k := p.Keyhive()
	docCase(t, p, "+OK\r\n", "CONFIG", "SET", "notify-keyspace-events", "hSTIV")
	docCase(t, p, "*2\r\n$22\r\nnotify-keyspace-events\r\n$5\r\nhSTIV\r\n", "CONFIG", "GET", "notify-keyspace-events")
	for _, proto := range []string{"2", "3"} {
		sub := p.NewConn().Keyhive()
		sub.Do("HELLO", proto)
		sub.Do("PSUBSCRIBE", "__subkey*")
		expect := func(want []string, args ...any) {
			t.Helper()
			k.Do(args...)
			sub.Send("PING")
			if got := events(sub); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("RESP%s, events after %v:\ngot  %q\nwant %q", proto, args, got, want)
			}
		}
		expect([]string{
			"__subkeyspace@0__:myhash hset|6:field1,6:field2",
			"__subkeyevent@0__:hset 6:myhash|6:field1,6:field2",
			"__subkeyspaceitem@0__:myhash\nfield1 hset",
			"__subkeyspaceitem@0__:myhash\nfield2 hset",
			"__subkeyspaceevent@0__:hset|myhash 6:field1,6:field2",
		}, "HSET", "myhash", "field1", "val1", "field2", "val2")
		// Binary-safe: a comma in a field is inside its length.
		expect([]string{
			"__subkeyspace@0__:myhash hset|3:a,b",
			"__subkeyevent@0__:hset 6:myhash|3:a,b",
			"__subkeyspaceitem@0__:myhash\na,b hset",
			"__subkeyspaceevent@0__:hset|myhash 3:a,b",
		}, "HSET", "myhash", "a,b", "1")
		expect([]string{
			"__subkeyspace@0__:myhash hdel|3:a,b,6:field1",
			"__subkeyevent@0__:hdel 6:myhash|3:a,b,6:field1",
			"__subkeyspaceitem@0__:myhash\na,b hdel",
			"__subkeyspaceitem@0__:myhash\nfield1 hdel",
			"__subkeyspaceevent@0__:hdel|myhash 3:a,b,6:field1",
		}, "HDEL", "myhash", "a,b", "field1", "nope")
		// A key with a newline has no subkeyspaceitem channel.
		expect([]string{
			"__subkeyspace@0__:a\nb hset|1:f",
			"__subkeyevent@0__:hset 3:a\nb|1:f",
			"__subkeyspaceevent@0__:hset|a\nb 1:f",
		}, "HSET", "a\nb", "f", "v")
		// Nothing without a subkey, nor for other types.
		expect(nil, "HDEL", "myhash", "nope")
		expect(nil, "SADD", "s", "m")
		k.Do("DEL", "myhash", "a\nb", "s")
	}
}
