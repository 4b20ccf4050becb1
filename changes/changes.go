// Package changes is the change stream: the one point every change to the
// data set passes through, as the command that replays it (a write as Redis
// propagates it, relative expire times made absolute; an expiry or an
// eviction as DEL or UNLINK). The AOF, OnPropagate's consumers and the
// replication feed (replicas) subscribe to it.
//
// Targets. A few commands change no data but must reach replicas, as
// Redis propagates them to replicas and not to the AOF (PROPAGATE_REPL):
// PUBLISH, so that clients subscribed on a replica get its messages. Such a
// command (an Op for ReplicasOnly) goes to the subscribers that feed
// replicas (SubscribeReplicas) only. A script's redis.set_repl sends its
// writes to replicas only, or to the others (the AOF, OnPropagate) only
// (AOFOnly). The MULTI and EXEC around a block go to everyone, as Redis
// counts a block's commands whatever their target.
//
// Ordering. Subscribers receive the commands in one total order, each
// command once, each subscriber in the order it subscribed. A writer
// publishes while it holds the locks of the keys it changed, so two changes
// to the same key are published in the order they were made; changes to
// different keys made in parallel are ordered by the stream's lock. A block
// (PublishBlock: a MULTI/EXEC, a script) is published under one hold of the
// lock, so no other command lands inside it.
//
// Subscribers. Receive runs on the writer's goroutine, under the writer's key
// locks and the stream's lock: it must be quick, must not block on other
// clients, must not call into the server (a command, a lock of the keyspace,
// Publish: each may wait for the locks held around it), and must not keep or
// modify argv or its elements, which are valid only during the call (copy
// what is kept).
package changes

import (
	"slices"
	"sync"
	"sync/atomic"
)

// A Subscriber receives every change, in order, as the command that replays
// it in database db.
type Subscriber interface {
	Receive(db int, argv [][]byte)
}

// SubscriberFunc makes a function a Subscriber.
type SubscriberFunc func(db int, argv [][]byte)

// Receive calls f.
func (f SubscriberFunc) Receive(db int, argv [][]byte) { f(db, argv) }

// Op is one command of a block.
type Op struct {
	DB   int
	Argv [][]byte
	To   Target
}

// Target says which subscribers receive an Op.
type Target uint8

const (
	// Everyone is every subscriber.
	Everyone Target = iota
	// ReplicasOnly is the subscribers that feed replicas.
	ReplicasOnly
	// AOFOnly is the subscribers that do not feed replicas.
	AOFOnly
)

// Stream is the change stream. The zero value has no subscribers and is
// ready to use; a Stream must not be copied.
type Stream struct {
	mu       sync.Mutex
	active   atomic.Bool // any subscriber; read without the lock on every write
	replicas atomic.Bool // any subscriber that feeds replicas
	subs     []*subscription
}

type subscription struct {
	Subscriber
	replicas bool // it takes the commands for replicas only
}

// A block's wrapping commands; shared, so subscribers must not modify argv.
var (
	multiArgv = [][]byte{[]byte("MULTI")}
	execArgv  = [][]byte{[]byte("EXEC")}
)

// Active reports whether anything subscribes: a writer that would build a
// command only to publish it skips that when nothing does.
func (s *Stream) Active() bool { return s.active.Load() }

// FeedsReplicas reports whether a subscriber feeds replicas: a command for
// replicas only is worth publishing.
func (s *Stream) FeedsReplicas() bool { return s.replicas.Load() }

// Publish hands one command to every subscriber.
func (s *Stream) Publish(db int, argv [][]byte) {
	if !s.active.Load() {
		return
	}
	s.mu.Lock()
	s.emit(db, argv, Everyone)
	s.mu.Unlock()
}

// PublishBlock publishes ops as one block: wrapped in MULTI and EXEC when
// there are several, as Redis 7.0 does (one command is atomic by itself),
// and under one hold of the lock, so that no other writer's command lands
// inside the block: commands on other keys run in parallel, and a subscriber
// replaying an interleaved block would drop or split it.
func (s *Stream) PublishBlock(ops []Op) {
	if len(ops) == 0 || !s.active.Load() {
		return
	}
	s.mu.Lock()
	if len(ops) > 1 {
		s.emit(ops[0].DB, multiArgv, Everyone)
	}
	for _, op := range ops {
		s.emit(op.DB, op.Argv, op.To)
	}
	if len(ops) > 1 {
		s.emit(ops[len(ops)-1].DB, execArgv, Everyone)
	}
	s.mu.Unlock()
}

// emit hands one command to the subscribers it is for; the caller holds mu.
func (s *Stream) emit(db int, argv [][]byte, to Target) {
	for _, sub := range s.subs {
		if to == Everyone || sub.replicas == (to == ReplicasOnly) {
			sub.Receive(db, argv)
		}
	}
}

// Subscribe adds sub, which receives every command published from now on
// but those for replicas only, until cancel is called. cancel returns once
// sub receives nothing more; it may be called more than once.
func (s *Stream) Subscribe(sub Subscriber) (cancel func()) {
	return s.subscribe(&subscription{Subscriber: sub})
}

// SubscribeReplicas is Subscribe for a subscriber that feeds replicas: it
// receives the commands for replicas only too.
func (s *Stream) SubscribeReplicas(sub Subscriber) (cancel func()) {
	return s.subscribe(&subscription{Subscriber: sub, replicas: true})
}

func (s *Stream) subscribe(entry *subscription) (cancel func()) {
	s.mu.Lock()
	s.subs = append(s.subs, entry)
	s.updateFlags()
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for i, e := range s.subs {
			if e == entry {
				s.subs = slices.Delete(s.subs, i, i+1)
				break
			}
		}
		s.updateFlags()
	}
}

// updateFlags sets active and replicas from the subscribers; needs mu.
func (s *Stream) updateFlags() {
	s.active.Store(len(s.subs) > 0)
	s.replicas.Store(slices.ContainsFunc(s.subs, func(e *subscription) bool { return e.replicas }))
}
