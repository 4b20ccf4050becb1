package command

import (
	"math"
	"math/big"
	"time"

	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/resp"
)

// BlockRequest is what a blocking command waits for and how it is served.
type BlockRequest struct {
	Keys     [][]byte
	Dst      []byte // BLMOVE's destination
	Type     keyspace.Type
	Deadline time.Time // zero: no timeout
	// Serve pops from key, which holds an element of Type, and replies. For
	// a waiter it runs in the goroutine of the command that filled the key,
	// with the key locked, on a Ctx of its own.
	Serve    func(x *Ctx, key []byte)
	TimedOut func(w *resp.Writer)
	Denied   func(w *resp.Writer) // the reply inside MULTI or a script; nil: TimedOut
	// Ready, when not nil, says whether key (e, found=false when missing)
	// can serve the waiter, instead of "it exists with type Type": a stream
	// reader waits for entries past an ID, and XREADGROUP is also served
	// (an error) when its key or group goes.
	Ready func(e *keyspace.Entry, found bool) bool
}

// PopOrBlock serves the first of the keys that exists, replying WRONGTYPE if
// one before it has another type, or else blocks on them all.
func (x *Ctx) PopOrBlock(b BlockRequest) {
	for _, key := range b.Keys {
		e, found := x.LookupWrite(key)
		if x.WrongType(&e, found, b.Type) {
			return
		}
		if found {
			b.Serve(x, key)
			return
		}
	}
	x.Block(b)
}

// Block makes the command wait for one of its keys to be ready. Inside
// MULTI or a script it replies at once instead, as Redis does.
func (x *Ctx) Block(b BlockRequest) { x.conn.Block(x, b) }

// ErrTimeoutRange is the reply to a timeout whose deadline long long can't hold.
const ErrTimeoutRange = "ERR timeout is out of range"

// ParseTimeout parses a blocking command's timeout in seconds, with Redis
// 7.4's checks and error texts, and returns the deadline (zero for none).
func (x *Ctx) ParseTimeout(arg []byte) (time.Time, bool) {
	sec, ok := strnum.ParseLongDouble(arg)
	if !ok {
		x.W.Error("ERR timeout is not a float or out of range")
		return time.Time{}, false
	}
	// In long double, as Redis: -0.001 s is -0.99999... ms, which rounds up
	// to 0 (no timeout) instead of being negative. Beyond long long (7.2+)
	// a positive value is out of range and a negative one negative.
	f := new(big.Float).SetPrec(sec.Prec()).Mul(sec, big.NewFloat(1000))
	if f.Sign() > 0 && (f.IsInf() || f.Cmp(big.NewFloat(math.MaxInt64)) > 0) {
		x.W.Error(ErrTimeoutRange)
		return time.Time{}, false
	}
	ms, acc := int64(math.MinInt64), big.Exact
	if !f.IsInf() && f.Cmp(big.NewFloat(math.MinInt64)) >= 0 {
		ms, acc = f.Int64()
	}
	if acc == big.Below && ms != math.MinInt64 {
		ms++ // truncated towards zero below a positive value: round up
	}
	switch {
	case ms < 0:
		x.W.Error("ERR timeout is negative")
		return time.Time{}, false
	case ms == 0:
		return time.Time{}, true
	}
	now := time.Now()
	if ms > math.MaxInt64-now.UnixMilli() {
		x.W.Error(ErrTimeoutRange)
		return time.Time{}, false
	}
	if ms >= math.MaxInt64/int64(time.Millisecond) {
		return time.Time{}, true // beyond what a timer can wait: centuries
	}
	return now.Add(time.Duration(ms) * time.Millisecond), true
}
