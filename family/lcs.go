package family

import (
	"math"

	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/keyspace"
)

func registerLCS(bind binder) {
	bind("lcs", lcsCommand)
}

// lcsMatch is one run of matching bytes reported by LCS IDX: [aStart, aEnd] in
// the first string, [bStart, bEnd] in the second.
type lcsMatch struct {
	aStart, aEnd, bStart, bEnd int
}

func lcsCommand(x *command.Ctx) {
	ea, foundA := x.LookupRead(x.Args[1])
	eb, foundB := x.LookupRead(x.Args[2])
	if (foundA && ea.Type() != keyspace.TypeString) || (foundB && eb.Type() != keyspace.TypeString) {
		x.W.Error("ERR The specified keys must contain string values")
		return
	}
	var a, b []byte
	if foundA {
		a = ea.Value()
	}
	if foundB {
		b = eb.Value()
	}

	var getLen, getIdx, withMatchLen bool
	var minMatchLen int64
	for j := 3; j < len(x.Args); j++ {
		opt := x.Args[j]
		switch {
		case cstr.ArgIs(opt, "idx"):
			getIdx = true
		case cstr.ArgIs(opt, "len"):
			getLen = true
		case cstr.ArgIs(opt, "withmatchlen"):
			withMatchLen = true
		case cstr.ArgIs(opt, "minmatchlen") && j+1 < len(x.Args):
			v, ok := strnum.ParseInt(x.Args[j+1])
			if !ok {
				x.W.Error(command.ErrNotInt)
				return
			}
			minMatchLen = max(v, 0)
			j++
		default:
			x.W.Error(command.ErrSyntax)
			return
		}
	}
	if getIdx && getLen {
		x.W.Error("ERR If you want both the length and indexes, please just use IDX.")
		return
	}
	if uint64(len(a)) >= math.MaxUint32-1 || uint64(len(b)) >= math.MaxUint32-1 {
		x.W.Error("ERR String too long for LCS")
		return
	}

	// The table holds at [i*(len(b)+1)+j] the LCS length of a[:i] and b[:j].
	// Like Redis, refuse a table larger than proto-max-bulk-len.
	cells := uint64(len(a)+1) * uint64(len(b)+1)
	if cells > math.MaxInt64/4 || int64(cells*4) > x.Config().ProtoMaxBulkLen() {
		x.W.Error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
		return
	}
	w := len(b) + 1
	table := make([]uint32, cells)
	for i := 1; i <= len(a); i++ {
		row, prev := table[i*w:(i+1)*w], table[(i-1)*w:i*w]
		ca := a[i-1]
		for j := 1; j < w; j++ {
			switch {
			case ca == b[j-1]:
				row[j] = prev[j-1] + 1
			case prev[j] > row[j-1]:
				row[j] = prev[j]
			default:
				row[j] = row[j-1]
			}
		}
	}
	total := int(table[len(a)*w+len(b)])

	if getLen {
		x.W.Int(int64(total))
		return
	}

	// Walk back from the end, collecting the common subsequence and the runs
	// of contiguous matches (last run first).
	var result []byte
	if !getIdx {
		result = make([]byte, total)
	}
	var matches []lcsMatch
	cur := lcsMatch{aStart: -1}
	emit := func() {
		if n := cur.aEnd - cur.aStart + 1; minMatchLen == 0 || int64(n) >= minMatchLen {
			matches = append(matches, cur)
		}
		cur.aStart = -1
	}
	idx := total
	for i, j := len(a), len(b); i > 0 && j > 0; {
		if a[i-1] == b[j-1] {
			idx--
			if result != nil {
				result[idx] = a[i-1]
			}
			if cur.aStart < 0 {
				cur = lcsMatch{aStart: i - 1, aEnd: i - 1, bStart: j - 1, bEnd: j - 1}
			} else {
				// A match right after the previous one extends the run.
				cur.aStart, cur.bStart = i-1, j-1
			}
			i--
			j--
			if i == 0 || j == 0 {
				emit()
			}
			continue
		}
		if table[(i-1)*w+j] > table[i*w+j-1] {
			i--
		} else {
			j--
		}
		if cur.aStart >= 0 {
			emit()
		}
	}

	if !getIdx {
		x.W.Bulk(result)
		return
	}
	x.W.Map(2)
	x.W.BulkString("matches")
	x.W.Array(len(matches))
	for _, m := range matches {
		if withMatchLen {
			x.W.Array(3)
		} else {
			x.W.Array(2)
		}
		x.W.Array(2)
		x.W.Int(int64(m.aStart))
		x.W.Int(int64(m.aEnd))
		x.W.Array(2)
		x.W.Int(int64(m.bStart))
		x.W.Int(int64(m.bEnd))
		if withMatchLen {
			x.W.Int(int64(m.aEnd - m.aStart + 1))
		}
	}
	x.W.BulkString("len")
	x.W.Int(int64(total))
}
