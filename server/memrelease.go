package server

import (
	"runtime/debug"
	"sync/atomic"
	"time"
)

// Returning memory to the OS after the live heap shrank a lot at once: a
// SCRIPT FLUSH of many scripts, or many connections closing (each held a
// goroutine stack and buffers). Go gives freed heap back only through its
// background scavenger, which keeps what the heap goal of the last
// collection allows, and an idle server runs no collection: after 10,000
// idle connections closed, RSS stayed at 5.7 times what it was before them.
// So the cron asks for a collection and a full return (debug.FreeOSMemory)
// in the background, at most every releaseInterval, never on a command's
// path; used_memory (runtime memory minus released) then drops too. A
// single big buffer dropped (a reply, a save's records) is returned at once
// by its owner (returnHeap), so that the next command under maxmemory
// already sees it gone.

const (
	releaseInterval = 5 * time.Second
	// releaseClientDrop: this many fewer clients than the peak since the
	// last release (about 10 KB each) is worth a release; a steady churn of
	// connections is not.
	releaseClientDrop = 1000
	// releaseMinBytes is what a flush must have freed to be worth one.
	releaseMinBytes = 4 << 20
)

type memRelease struct {
	wanted  atomic.Bool
	running atomic.Bool
	last    int64 // monotonic ns of the last release; cron only
	// peakClients is the most clients since the last release (under
	// Server.mu).
	peakClients int
}

// freed notes that about n bytes became garbage, for the cron to return.
func (s *Server) freed(n int64) {
	if n >= releaseMinBytes {
		s.memRelease.wanted.Store(true)
	}
}

// noteClients keeps the peak client count; the caller holds s.mu.
func (s *Server) noteClients() {
	if r := &s.memRelease; len(s.clients) > r.peakClients {
		r.peakClients = len(s.clients)
	}
}

// releaseMemoryCron starts a release when one is due (cron, once a second).
func (s *Server) releaseMemoryCron() {
	r := &s.memRelease
	s.mu.Lock()
	if n := len(s.clients); r.peakClients-n >= releaseClientDrop {
		r.wanted.Store(true)
		r.peakClients = n
	}
	s.mu.Unlock()
	mono := monoNow()
	if !r.wanted.Load() || (r.last != 0 && mono-r.last < int64(releaseInterval)) || !r.running.CompareAndSwap(false, true) {
		return
	}
	r.wanted.Store(false)
	r.last = mono
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer r.running.Store(false)
		s.returnHeap()
	}()
}

// bigReply is the size of a dropped reply buffer (a big value sent) worth a
// collection to give back to the OS: left to the runtime, it would count in
// used memory until a collection the small Go heap may not ask for in
// minutes, refusing writes under maxmemory all that time.
const bigReply = 32 << 20

// returnHeap collects the garbage and gives free heap memory back to the OS
// now, and refreshes used_memory. A client calls it after writing a big
// reply, so that its next command finds the memory released; it costs a
// collection of a heap that holds little (the keyspace is outside it).
func (s *Server) returnHeap() {
	debug.FreeOSMemory()
	s.readRuntimeMem(monoNow())
}
