package changes

import (
	"strconv"
	"sync"
	"testing"
)

// recorder keeps what it receives as "db:word word ...".
type recorder struct{ got []string }

func (r *recorder) Receive(db int, argv [][]byte) {
	s := strconv.Itoa(db) + ":"
	for i, a := range argv {
		if i > 0 {
			s += " "
		}
		s += string(a)
	}
	r.got = append(r.got, s)
}

func argv(words ...string) [][]byte {
	out := make([][]byte, len(words))
	for i, w := range words {
		out[i] = []byte(w)
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestOrderAndBlocks(t *testing.T) {
	var s Stream
	if s.Active() {
		t.Fatal("a new stream is active")
	}
	s.Publish(0, argv("SET", "lost", "1")) // nobody listens: dropped
	var first, second recorder
	var order []string
	cancelFirst := s.Subscribe(&first)
	s.Subscribe(SubscriberFunc(func(db int, a [][]byte) { order = append(order, "func") }))
	s.Subscribe(SubscriberFunc(func(db int, a [][]byte) { order = append(order, "last") }))
	cancelSecond := s.Subscribe(&second)
	if !s.Active() {
		t.Fatal("a stream with subscribers is not active")
	}
	s.Publish(0, argv("SET", "a", "1"))
	s.PublishBlock([]Op{{DB: 1, Argv: argv("INCR", "b")}})                                 // one command: no MULTI
	s.PublishBlock([]Op{{DB: 2, Argv: argv("DEL", "c")}, {DB: 3, Argv: argv("DEL", "d")}}) // wrapped
	s.PublishBlock(nil)
	want := []string{"0:SET a 1", "1:INCR b", "2:MULTI", "2:DEL c", "3:DEL d", "3:EXEC"}
	if !equal(first.got, want) || !equal(second.got, want) {
		t.Fatalf("got %q and %q, want %q", first.got, second.got, want)
	}
	if len(order) != 2*len(want) || order[0] != "func" || order[1] != "last" {
		t.Fatalf("subscribers called in order %q", order)
	}
	cancelFirst()
	cancelFirst() // a second cancel does nothing
	s.Publish(0, argv("SET", "e", "1"))
	if len(first.got) != len(want) || len(second.got) != len(want)+1 {
		t.Fatalf("after cancel: first got %d, second %d", len(first.got), len(second.got))
	}
	cancelSecond()
	if !s.Active() {
		t.Fatal("inactive with two function subscribers left")
	}
}

// TestReplicasOnly: a command for replicas only reaches the subscribers
// that feed replicas; the MULTI and EXEC of its block reach everyone, as
// Redis writes them to the AOF too.
func TestReplicasOnly(t *testing.T) {
	var s Stream
	var aof, feed recorder
	s.Subscribe(&aof)
	if s.FeedsReplicas() {
		t.Fatal("feeds replicas with no replica subscriber")
	}
	cancel := s.SubscribeReplicas(&feed)
	if !s.FeedsReplicas() {
		t.Fatal("does not feed replicas with a replica subscriber")
	}
	s.PublishBlock([]Op{{DB: 0, Argv: argv("PUBLISH", "ch", "1"), To: ReplicasOnly}})
	s.PublishBlock([]Op{{DB: 0, Argv: argv("SET", "a", "1")}, {DB: 0, Argv: argv("PUBLISH", "ch", "2"), To: ReplicasOnly}})
	wantAOF := []string{"0:MULTI", "0:SET a 1", "0:EXEC"}
	wantFeed := []string{"0:PUBLISH ch 1", "0:MULTI", "0:SET a 1", "0:PUBLISH ch 2", "0:EXEC"}
	if !equal(aof.got, wantAOF) || !equal(feed.got, wantFeed) {
		t.Fatalf("got %q and %q, want %q and %q", aof.got, feed.got, wantAOF, wantFeed)
	}
	cancel()
	if s.FeedsReplicas() || !s.Active() {
		t.Fatalf("after the replica subscriber left: feeds replicas %v, active %v", s.FeedsReplicas(), s.Active())
	}
}

func TestCancelLastInactive(t *testing.T) {
	var s Stream
	var r recorder
	cancel := s.Subscribe(&r)
	cancel()
	if s.Active() {
		t.Fatal("active after the only subscriber left")
	}
	s.Publish(0, argv("SET", "a", "1"))
	if len(r.got) != 0 {
		t.Fatalf("a cancelled subscriber received %q", r.got)
	}
}

// TestBlocksAtomic publishes blocks and single commands from many
// goroutines at once: every block must reach the subscriber contiguous.
func TestBlocksAtomic(t *testing.T) {
	var s Stream
	var r recorder // called under the stream's lock: no lock of its own
	s.Subscribe(&r)
	const writers, blocks, size = 8, 200, 5
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			ops := make([]Op, size)
			for b := range blocks {
				for i := range ops {
					ops[i] = Op{DB: w, Argv: argv("INCR", strconv.Itoa(w)+":"+strconv.Itoa(b)+":"+strconv.Itoa(i))}
				}
				s.PublishBlock(ops)
				s.Publish(w, argv("PING"))
			}
		})
	}
	wg.Wait()
	if len(r.got) != writers*blocks*(size+3) {
		t.Fatalf("received %d commands, want %d", len(r.got), writers*blocks*(size+3))
	}
	next := make([]int, writers) // each writer's next block
	for i := 0; i < len(r.got); i++ {
		if r.got[i][len(r.got[i])-5:] == ":PING" {
			continue
		}
		if r.got[i][2:] != "MULTI" {
			t.Fatalf("command %d: %q outside a block", i, r.got[i])
		}
		w := int(r.got[i][0] - '0')
		for k := range size {
			want := strconv.Itoa(w) + ":INCR " + strconv.Itoa(w) + ":" + strconv.Itoa(next[w]) + ":" + strconv.Itoa(k)
			if r.got[i+1+k] != want {
				t.Fatalf("command %d: %q, want %q (a block was split)", i+1+k, r.got[i+1+k], want)
			}
		}
		if r.got[i+1+size][2:] != "EXEC" {
			t.Fatalf("command %d: %q, want EXEC", i+1+size, r.got[i+1+size])
		}
		next[w]++
		i += size + 1
	}
}

// TestPublishAllocs checks that publishing allocates nothing.
func TestPublishAllocs(t *testing.T) {
	var s Stream
	s.Subscribe(SubscriberFunc(func(int, [][]byte) {}))
	a := argv("SET", "k", "v")
	ops := []Op{{DB: 0, Argv: a}, {DB: 0, Argv: a, To: ReplicasOnly}}
	if n := testing.AllocsPerRun(100, func() {
		s.Publish(0, a)
		s.PublishBlock(ops)
	}); n != 0 {
		t.Fatalf("%v allocations per publish", n)
	}
}
