package server_test

import (
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// TestReplRoleChangeUnblocks: a master told to follow another server ends
// its blocked commands (BLPOP, WAIT) with -UNBLOCKED and closes their
// connections, as redis-server 7.4.1 does; the list a BLPOP waited on is
// then the new master's, on both servers (no pop served on the replica
// alone).
func TestReplRoleChangeUnblocks(t *testing.T) {
	oracle := difftest.Need74(t)
	start := func(redis bool, name string) *replNode {
		if redis {
			addr, stop, err := difftest.StartProcess(oracle)
			return openReplNode(t, "redis 7.4 "+name, addr, stop, err)
		}
		return startReplNode(t, false)
	}
	var got [2][]string
	for i, redis := range []bool{true, false} {
		a, b := start(redis, "a"), start(redis, "b")
		var blocked []*difftest.Conn
		for _, cmd := range [][]any{{"BLPOP", "l", 0}, {"WAIT", 1, 0}} {
			c, err := difftest.Dial(a.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.Send(cmd...); err != nil {
				t.Fatal(err)
			}
			blocked = append(blocked, c)
			want := len(blocked)
			waitUntil(t, a.name+" blocked clients", func() bool { return a.infoInt(t, "clients", "blocked_clients") == int64(want) })
		}
		host, port := b.hostPort()
		a.ok(t, "REPLICAOF", host, port)
		for _, c := range blocked {
			r, err := c.Read()
			if err != nil {
				t.Fatalf("%s: %v", a.name, err)
			}
			got[i] = append(got[i], string(r.Raw))
			if err := c.WaitClosed(); err != nil {
				t.Errorf("%s: the unblocked connection stays open: %v", a.name, err)
			}
		}
		b.ok(t, "RPUSH", "l", "x")
		waitUntil(t, a.name+" syncs", func() bool {
			return a.info(t, "replication", "master_link_status") == "up" && a.do(t, "LLEN", "l").Int == 1
		})
		if da, db := a.ok(t, "DEBUG", "DIGEST").Str, b.ok(t, "DEBUG", "DIGEST").Str; da != db {
			t.Errorf("%s: digest %s, its master's %s", a.name, da, db)
		}
		got[i] = append(got[i], a.info(t, "clients", "blocked_clients"))
	}
	sameSteps(t, got[0], got[1])
}
