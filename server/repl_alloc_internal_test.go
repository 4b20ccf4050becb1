package server

import "testing"

// TestReplFeedAllocatesNothing: with a backlog (a replica attached), a
// write that propagates as sent costs no allocation for the replication
// feed; without one, nothing was added to the command's path either.
func TestReplFeedAllocatesNothing(t *testing.T) {
	s := newTestServer(t)
	c := pipeClient(t, s)
	args := [][]byte{[]byte("SET"), []byte("key"), []byte("value")}
	run := func() {
		c.execute(args)
		c.out.B = c.out.B[:0]
	}
	for range 1000 {
		run()
	}
	if n := testing.AllocsPerRun(500, run); n > 0 {
		t.Fatalf("without replicas: %v allocations per SET", n)
	}
	b := s.repl.EnsureBacklog()
	for range 50000 { // the backlog's blocks exist: from now on they are reused
		run()
	}
	before := b.End()
	if n := testing.AllocsPerRun(500, run); n > 0 {
		t.Fatalf("with a backlog: %v allocations per SET", n)
	}
	if b.End() == before {
		t.Fatal("the SETs did not reach the backlog")
	}
}

// BenchmarkReplFeed is a SET's cost through the command path without a
// replica and with a backlog to feed.
func BenchmarkReplFeed(b *testing.B) {
	for _, withBacklog := range []bool{false, true} {
		name := "no-replica"
		if withBacklog {
			name = "backlog"
		}
		b.Run(name, func(b *testing.B) {
			s := newTestServer(b)
			c := pipeClient(b, s)
			if withBacklog {
				s.repl.EnsureBacklog()
			}
			args := [][]byte{[]byte("SET"), []byte("key"), []byte("value")}
			b.ReportAllocs()
			for b.Loop() {
				c.execute(args)
				c.out.B = c.out.B[:0]
			}
		})
	}
}
