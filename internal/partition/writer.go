package partition

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
)

// opTimeout bounds a write: a request into a cut link is given up (its
// connection closed, its outcome unknown, never counted as acknowledged).
// A dial is bounded by it too, so that one of the writer's connections
// tries again within a few milliseconds of a heal.
const opTimeout = 100 * time.Millisecond

// Writer sends SETs of fresh keys to one address over several connections,
// each reconnecting after every failure, and records each acknowledged
// write with the phase its connection was dialed in: a write is only
// attributed to a phase if no byte of it can have left earlier.
type Writer struct {
	addr  string
	phase atomic.Int32
	stop  chan struct{}
	wg    sync.WaitGroup

	mu       sync.Mutex
	acked    []ack
	errors   map[string]int // error replies by their first word
	answered map[int32]int  // replies of any kind, by phase
}

type ack struct {
	key   string
	phase int32
}

// StartWriter starts writing keys prefix+conn+":"+seq to addr over conns
// connections, in phase 0.
func StartWriter(addr, prefix string, conns int) *Writer {
	w := &Writer{addr: addr, stop: make(chan struct{}), errors: map[string]int{}, answered: map[int32]int{}}
	for i := range conns {
		w.wg.Add(1)
		go w.run(prefix + strconv.Itoa(i) + ":")
	}
	return w
}

// NextPhase starts a new phase (the writes of connections dialed from now on).
func (w *Writer) NextPhase() int32 { return w.phase.Add(1) }

func (w *Writer) run(prefix string) {
	defer w.wg.Done()
	seq := 0
	for {
		select {
		case <-w.stop:
			return
		default:
		}
		phase := w.phase.Load()
		c, err := difftest.DialTimeout(w.addr, opTimeout)
		if err != nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		for {
			select {
			case <-w.stop:
				c.Close()
				return
			default:
			}
			key := prefix + strconv.Itoa(seq)
			seq++
			r, err := c.Do("SET", key, key)
			if err != nil {
				break
			}
			w.mu.Lock()
			w.answered[phase]++
			if r.IsError() {
				word, _, _ := strings.Cut(r.Str, " ")
				w.errors[word]++
			} else {
				w.acked = append(w.acked, ack{key, phase})
			}
			w.mu.Unlock()
			if r.IsError() {
				time.Sleep(5 * time.Millisecond) // a refusing server is asked again, not flooded
			}
		}
		c.Close()
	}
}

// Stop stops writing and waits for the last reply.
func (w *Writer) Stop() {
	close(w.stop)
	w.wg.Wait()
}

// Summary counts the acknowledged writes per phase and the error replies.
func (w *Writer) Summary() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	perPhase := map[int32]int{}
	for _, a := range w.acked {
		perPhase[a.phase]++
	}
	return fmt.Sprintf("acknowledged per phase %v, error replies %v", perPhase, w.errors)
}

// Answered counts the replies, acknowledgements and errors, of the
// connections dialed in phase from on: whether the server was heard at all.
func (w *Writer) Answered(from int32) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for phase, k := range w.answered {
		if phase >= from {
			n += k
		}
	}
	return n
}

// Lost returns the keys acknowledged in phase from on that the server at
// addr does not have.
func (w *Writer) Lost(addr string, from int32) (lost []string, checked int, err error) {
	w.mu.Lock()
	var keys []string
	for _, a := range w.acked {
		if a.phase >= from {
			keys = append(keys, a.key)
		}
	}
	w.mu.Unlock()
	c, err := difftest.Dial(addr)
	if err != nil {
		return nil, 0, err
	}
	defer c.Close()
	for _, k := range keys {
		r, err := c.Do("GET", k)
		if err != nil {
			return nil, 0, err
		}
		if r.IsError() {
			return nil, 0, fmt.Errorf("GET %s at %s: %s", k, addr, r.Str)
		}
		if r.Str != k {
			lost = append(lost, k)
		}
	}
	return lost, len(keys), nil
}
