package command

import (
	"math"
	"strconv"

	"github.com/keyhive/keyhive/glob"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/values"
)

// ScanOptions are the options of the SCAN family: MATCH and COUNT, and for
// SCAN itself TYPE.
type ScanOptions struct {
	Pattern  []byte // nil matches everything
	Count    int64
	TypeName []byte // with HasType: only keys of this type
	HasType  bool
	NoValues bool // HSCAN NOVALUES (Redis 7.4): fields only
}

// emptyScan is the reply of HSCAN, SSCAN and ZSCAN for a missing key.
const emptyScan = "*2\r\n$1\r\n0\r\n*0\r\n"

// ParseScanOptions parses option/value pairs as Redis does (names compared
// as C strings, COUNT at least 1), replying with Redis's errors when they
// are bad.
func (x *Ctx) ParseScanOptions(args [][]byte, withType bool) (ScanOptions, bool) {
	o := ScanOptions{Count: 10}
	for i := 0; i < len(args); i += 2 {
		if x.Name == "hscan" && cstr.ArgIs(args[i], "novalues") {
			o.NoValues = true
			i-- // a flag without a value
			continue
		}
		if i+1 >= len(args) {
			x.W.Error(ErrSyntax)
			return o, false
		}
		name, v := args[i], args[i+1]
		switch {
		case cstr.ArgIs(name, "count"):
			n, ok := strnum.ParseInt(v)
			if !ok {
				x.W.Error(ErrNotInt)
				return o, false
			}
			if n < 1 {
				x.W.Error(ErrSyntax)
				return o, false
			}
			o.Count = n
		case cstr.ArgIs(name, "match"):
			o.Pattern = v
		case withType && cstr.ArgIs(name, "type"):
			o.TypeName, o.HasType = v, true
		default:
			x.W.Error(ErrSyntax)
			return o, false
		}
	}
	if len(o.Pattern) == 1 && o.Pattern[0] == '*' {
		o.Pattern = nil
	}
	return o, true
}

// Matches reports whether b passes MATCH.
func (o *ScanOptions) Matches(b []byte) bool {
	return o.Pattern == nil || glob.Match(o.Pattern, b, false)
}

// Limit is COUNT as a Scan of the keyspace or a collection takes it.
func (o *ScanOptions) Limit() int { return int(min(o.Count, math.MaxInt32)) }

// WriteScanReply writes the next cursor and what was collected.
func (x *Ctx) WriteScanReply(next uint64) {
	x.W.Array(2)
	var cur [20]byte
	x.W.Bulk(strconv.AppendUint(cur[:0], next, 10))
	x.Collect.WriteArray(x.W)
}

// BeginScan starts HSCAN, SSCAN or ZSCAN: it parses the cursor and the
// options and looks the key up as a collection of V's type. When there is
// nothing to scan it replies (an error, or the empty scan of a missing key)
// and returns ok=false.
func BeginScan[V values.View](x *Ctx) (v V, cursor uint64, opts ScanOptions, ok bool) {
	cursor, ok = strnum.ParseCursor(x.Args[2])
	if !ok {
		x.W.Error("ERR invalid cursor")
		return v, 0, opts, false
	}
	v, found, ok := ReadAs[V](x, x.Args[1])
	if !ok {
		return v, 0, opts, false
	}
	if !found {
		x.W.B = append(x.W.B, emptyScan...)
		return v, 0, opts, false
	}
	if opts, ok = x.ParseScanOptions(x.Args[3:], false); !ok {
		return v, 0, opts, false
	}
	x.Collect.Reset()
	return v, cursor, opts, true
}
