package server

import (
	"sync"
	"sync/atomic"
)

// propagation is the one point every change to the data set passes through, as
// the command to replay: a write command as Redis propagates it (relative
// expire times made absolute), an expiry as DEL. The AOF, replicas and keyspace
// events consume this one stream.
type propagation struct {
	mu        sync.Mutex
	active    atomic.Bool // any consumer; checked without the lock on every write
	consumers []func(db int, argv [][]byte)
}

func (p *propagation) publish(db int, argv [][]byte) {
	if !p.active.Load() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, fn := range p.consumers {
		fn(db, argv)
	}
}

// OnPropagate registers fn to receive every change to the data set in order.
// argv is valid only during the call. fn runs with the changed keys locked and
// must not call into the server.
func (s *Server) OnPropagate(fn func(db int, argv [][]byte)) {
	p := &s.replication
	p.mu.Lock()
	p.consumers = append(p.consumers, fn)
	p.active.Store(true)
	p.mu.Unlock()
}
