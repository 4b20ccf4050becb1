package server

import (
	"math"
	"strconv"

	"github.com/keyhive/keyhive/glob"
	"github.com/keyhive/keyhive/internal/strnum"
)

// scanOptions are the options of the SCAN family: MATCH and COUNT, and for
// SCAN itself TYPE.
type scanOptions struct {
	pattern  []byte // nil matches everything
	count    int64
	typeName []byte // with hasType: only keys of this type
	hasType  bool
	noValues bool // HSCAN NOVALUES (Redis 7.4): fields only
}

// emptyScan is the reply of HSCAN, SSCAN and ZSCAN for a missing key.
const emptyScan = "*2\r\n$1\r\n0\r\n*0\r\n"

// parseScanOptions parses option/value pairs as Redis does (names compared as
// C strings, COUNT at least 1), replying with Redis's errors when they are bad.
func (x *Ctx) parseScanOptions(args [][]byte, withType bool) (scanOptions, bool) {
	o := scanOptions{count: 10}
	for i := 0; i < len(args); i += 2 {
		if x.cmd.Name == "hscan" && cArgIs(args[i], "novalues") {
			o.noValues = true
			i-- // a flag without a value
			continue
		}
		if i+1 >= len(args) {
			x.W.Error(errSyntax)
			return o, false
		}
		name, v := args[i], args[i+1]
		switch {
		case cArgIs(name, "count"):
			n, ok := strnum.ParseInt(v)
			if !ok {
				x.W.Error(errNotInt)
				return o, false
			}
			if n < 1 {
				x.W.Error(errSyntax)
				return o, false
			}
			o.count = n
		case cArgIs(name, "match"):
			o.pattern = v
		case withType && cArgIs(name, "type"):
			o.typeName, o.hasType = v, true
		default:
			x.W.Error(errSyntax)
			return o, false
		}
	}
	if len(o.pattern) == 1 && o.pattern[0] == '*' {
		o.pattern = nil
	}
	return o, true
}

// matches reports whether b passes MATCH.
func (o *scanOptions) matches(b []byte) bool {
	return o.pattern == nil || glob.Match(o.pattern, b, false)
}

// limit is COUNT as a Scan of the keyspace or a collection takes it.
func (o *scanOptions) limit() int { return int(min(o.count, math.MaxInt32)) }

// writeScanReply writes the next cursor and what was collected.
func (x *Ctx) writeScanReply(next uint64) {
	x.W.Array(2)
	var cur [20]byte
	x.W.Bulk(strconv.AppendUint(cur[:0], next, 10))
	x.collect.writeArray(x.W)
}
