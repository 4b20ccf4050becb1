package family

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/vset"
	"github.com/keyhive/keyhive/keyspace"
	"github.com/keyhive/keyhive/values"
)

// The vector set family (Redis 8's V* commands) over internal/vset. A set
// is a keyspace object created by its first VADD and deleted with its
// last element. Writes propagate as they are: a set's random choices (its
// nodes' levels) come from a generator kept in the set, so a replica or
// the AOF replaying them builds the same graph. VSIM runs in the command,
// as Redis's NOTHREAD; CAS is accepted and changes nothing, since an
// insert here never waits for a thread. Writes raise generic keyspace
// events named after the command.

func registerVSet(bind binder) {
	bind("vadd", vaddCommand)
	bind("vrem", vremCommand)
	bind("vsim", vsimCommand)
	bind("vdim", vdimCommand)
	bind("vcard", vcardCommand)
	bind("vemb", vembCommand)
	bind("vsetattr", vsetattrCommand)
	bind("vgetattr", vgetattrCommand)
	bind("vlinks", vlinksCommand)
	bind("vinfo", vinfoCommand)
	bind("vrandmember", vrandmemberCommand)
	bind("vismember", vismemberCommand)
	bind("vrange", vrangeCommand)
}

const (
	errVSetVector    = "ERR invalid vector specification"
	errVSetEF        = "ERR invalid EF"
	vsetMaxEF        = 1000000
	errVSetElement   = "ERR element not found in set"
	errVSetNoKey     = "ERR key does not exist"
	vsimDefaultCount = 10 // VSIM's COUNT when not given
)

// readVSet finds key's vector set for reading: nil when missing; ok=false
// after WRONGTYPE.
func readVSet(x *command.Ctx, key []byte) (*vset.Set, bool) {
	e, found, ok := x.ReadTyped(key, keyspace.TypeVectorSet)
	if !found || !ok {
		return nil, ok
	}
	return values.EntryVSet(&e), true
}

// readVSetElement opens the vector set at x.Args[1] and finds the element
// x.Args[2]: found=false when the key or the element is missing; ok=false
// when the key holds another type (replied).
func readVSetElement(x *command.Ctx) (s *vset.Set, id uint32, found, ok bool) {
	s, ok = readVSet(x, x.Args[1])
	if s != nil {
		id, found = s.Find(x.Args[2])
	}
	return s, id, found, ok
}

// parseVector reads FP32 blob or VALUES n v1 .. vn at args[at], after
// REDUCE dim when reduce is allowed: the vector, the REDUCE dimensions (0
// without), the arguments used; ok=false when malformed.
func parseVector(args [][]byte, at int, reduceOK bool) (v []float32, reduce, used int, ok bool) {
	if reduceOK && len(args) > at+2 && cstr.ArgIs(args[at], "reduce") {
		r, ok := parseInt(args[at+1])
		if !ok || r <= 0 {
			return nil, 0, 0, false
		}
		reduce, at, used = int(r), at+2, 2
	}
	if at+1 >= len(args) {
		return nil, 0, 0, false
	}
	switch {
	case cstr.ArgIs(args[at], "fp32"):
		blob := args[at+1]
		if len(blob) < 4 || len(blob)%4 != 0 || len(blob)/4 > vset.MaxDim {
			return nil, 0, 0, false
		}
		v = make([]float32, len(blob)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(blob[4*i:]))
		}
		used += 2
	case cstr.ArgIs(args[at], "values"):
		n, ok := parseInt(args[at+1])
		if !ok || n < 1 || n > vset.MaxDim || int64(len(args)) < int64(at)+2+n {
			return nil, 0, 0, false
		}
		v = make([]float32, n)
		for i := range v {
			f, ok := parseDouble(args[at+2+i])
			if !ok {
				return nil, 0, 0, false
			}
			v[i] = float32(f)
		}
		used += 2 + int(n)
	default:
		return nil, 0, 0, false
	}
	if reduce > len(v) {
		return nil, 0, 0, false
	}
	return v, reduce, used, true
}

// vaddCommand is VADD key [REDUCE dim] FP32|VALUES vector element [CAS]
// [NOQUANT|Q8|BIN] [EF n] [SETATTR json] [M n]: 1 when element is new, 0
// when its vector (and attributes, with SETATTR) were updated.
func vaddCommand(x *command.Ctx) {
	v, reduce, used, ok := parseVector(x.Args, 2, true)
	if !ok {
		x.W.Error(errVSetVector)
		return
	}
	at := 2 + used
	if at >= len(x.Args) {
		x.W.Error(command.ErrArity(x.Name))
		return
	}
	element := x.Args[at]
	quant, ef, m := vset.Q8, int64(vset.DefaultBuildEF), int64(vset.DefaultM)
	var attr []byte
	setAttr := false
	for j := at + 1; j < len(x.Args); j++ {
		opt, more := x.Args[j], j+1 < len(x.Args)
		switch {
		case cstr.ArgIs(opt, "cas"):
		case cstr.ArgIs(opt, "ef") && more:
			if ef, ok = parseInt(x.Args[j+1]); !ok || ef <= 0 || ef > vsetMaxEF {
				x.W.Error(errVSetEF)
				return
			}
			j++
		case cstr.ArgIs(opt, "m") && more:
			if m, ok = parseInt(x.Args[j+1]); !ok || m < vset.MinM || m > vset.MaxM {
				x.W.Error("ERR invalid M")
				return
			}
			j++
		case cstr.ArgIs(opt, "setattr") && more:
			attr, setAttr = x.Args[j+1], true
			j++
		case cstr.ArgIs(opt, "noquant"):
			quant = vset.NoQuant
		case cstr.ArgIs(opt, "bin"):
			quant = vset.Bin
		case cstr.ArgIs(opt, "q8"):
			quant = vset.Q8
		default:
			x.W.Error("ERR invalid option after element")
			return
		}
	}
	key := x.Args[1]
	e, found := x.LookupWrite(key)
	if x.WrongType(&e, found, keyspace.TypeVectorSet) {
		return
	}
	var s *vset.Set
	if found {
		s = values.EntryVSet(&e)
		if msg := vaddMismatch(s, len(v), reduce, quant, int(m)); msg != "" {
			x.W.Error(msg)
			return
		}
	} else {
		dim, projIn := len(v), 0
		if reduce > 0 {
			dim, projIn = reduce, len(v)
		}
		if projIn*dim > vset.MaxProjection {
			x.W.Error("ERR REDUCE projection too large")
			return
		}
		s = vset.New(dim, quant, int(m), projIn)
	}
	if s.ProjectionInput() > 0 {
		v = s.Project(v)
	}
	added := s.Add(element, v, attr, setAttr, int(ef))
	if found {
		x.DB.ModifiedEntry(&e)
	} else {
		values.StoreVSet(x.Env(), &e, key, s, 0)
	}
	x.W.Bool(added)
	vsetEvent(x, key, "vadd")
}

// vaddMismatch is VADD's error for a vector or option the existing set s
// cannot take ("" when it can).
func vaddMismatch(s *vset.Set, dim, reduce int, quant vset.Quant, m int) string {
	switch {
	case s.Quant() != quant:
		return "ERR asked quantization mismatch with existing vector set"
	case s.M() != m:
		return "ERR asked M value mismatch with existing vector set"
	case s.ProjectionInput() == 0 && s.Dim() != dim || s.ProjectionInput() > 0 && s.Dim() != reduce:
		return "ERR Vector dimension mismatch - got " + strconv.Itoa(dim) + " but set has " + strconv.Itoa(s.Dim())
	case reduce > 0 && s.ProjectionInput() == 0:
		return "ERR cannot add projection to existing set without projection"
	case s.ProjectionInput() > 0 && dim != s.ProjectionInput():
		return "ERR Input dimension mismatch for projection - got " + strconv.Itoa(dim) +
			" but projection expects " + strconv.Itoa(s.ProjectionInput())
	}
	return ""
}

func vsetEvent(x *command.Ctx, key []byte, event string) {
	x.Dirty++
	x.Notify(config.EventGeneric, event, key)
}

// vremCommand is VREM key element: 1 if element was removed. The set goes
// with its last element (a del event after the vrem).
func vremCommand(x *command.Ctx) {
	key := x.Args[1]
	e, found := x.LookupWrite(key)
	if x.WrongType(&e, found, keyspace.TypeVectorSet) {
		return
	}
	if !found || !values.EntryVSet(&e).Remove(x.Args[2]) {
		x.W.Bool(false)
		return
	}
	gone := values.EntryVSet(&e).Len() == 0
	if gone {
		x.DB.DeleteEntry(&e)
	} else {
		x.DB.ModifiedEntry(&e)
	}
	x.W.Bool(true)
	vsetEvent(x, key, "vrem")
	if gone {
		x.Notify(config.EventGeneric, "del", key) // as SREM taking a set's last member
	}
}

// vsimOptions are VSIM's options after the query.
type vsimOptions struct {
	scores, attribs, truth bool
	count, ef, filterEF    int64
	epsilon                float64
	filter                 *vset.Filter
}

// vsimCommand is VSIM key ELE element | FP32 blob | VALUES n v... [options]:
// the elements most similar to the query, most similar first.
func vsimCommand(x *command.Ctx) {
	s, ok := readVSet(x, x.Args[1])
	if !ok {
		return
	}
	if s == nil {
		x.W.Array(0)
		return
	}
	var q vset.Query
	var used int
	if cstr.ArgIs(x.Args[2], "ele") {
		id, found := s.Find(x.Args[3])
		if !found {
			x.W.Error(errVSetElement)
			return
		}
		q, used = s.NodeQuery(id), 2
	} else {
		v, _, n, ok := parseVector(x.Args, 2, false)
		if !ok {
			x.W.Error(errVSetVector)
			return
		}
		if s.ProjectionInput() > 0 && len(v) != s.Dim() {
			if len(v) != s.ProjectionInput() {
				x.W.Error("ERR Input dimension mismatch for projection - got " + strconv.Itoa(len(v)) +
					" but projection expects " + strconv.Itoa(s.ProjectionInput()))
				return
			}
			v = s.Project(v)
		}
		if len(v) != s.Dim() {
			x.W.Error("ERR Vector dimension mismatch - got " + strconv.Itoa(len(v)) + " but set has " + strconv.Itoa(s.Dim()))
			return
		}
		q, used = s.NewQuery(v), n
	}
	o, ok := parseVSimOptions(x, x.Args[2+used:])
	if !ok {
		return
	}
	if o.filterEF == 0 {
		o.filterEF = o.count * 100
	}
	ef := o.ef
	if ef == 0 {
		ef = vset.DefaultSearchEF
	}
	found := s.Search(q, int(o.count), int(min(ef, math.MaxInt32)), o.filter, int(min(o.filterEF, math.MaxInt32)), o.truth)
	n := 0
	for _, r := range found {
		if float64(r.Dist)/2 > o.epsilon {
			break
		}
		n++
	}
	found = found[:n]
	resp3 := x.W.Proto >= 3
	switch {
	case resp3 && (o.scores || o.attribs):
		x.W.Map(n)
	default:
		x.W.Array(n * (1 + boolInt(o.scores) + boolInt(o.attribs)))
	}
	for _, r := range found {
		x.W.Bulk(s.Name(r.ID))
		if resp3 && o.scores && o.attribs {
			x.W.Array(2)
		}
		if o.scores {
			x.W.Double(r.Similarity())
		}
		if o.attribs {
			if a := s.Attr(r.ID); a != nil {
				x.W.Bulk(a)
			} else {
				x.W.Null()
			}
		}
	}
}

func parseVSimOptions(x *command.Ctx, args [][]byte) (vsimOptions, bool) {
	o := vsimOptions{count: vsimDefaultCount, epsilon: 2}
	for j := 0; j < len(args); j++ {
		opt, more := args[j], j+1 < len(args)
		var ok bool
		switch {
		case cstr.ArgIs(opt, "withscores"):
			o.scores = true
		case cstr.ArgIs(opt, "withattribs"):
			o.attribs = true
		case cstr.ArgIs(opt, "truth"):
			o.truth = true
		case cstr.ArgIs(opt, "nothread"):
		case cstr.ArgIs(opt, "count") && more:
			if o.count, ok = parseInt(args[j+1]); !ok || o.count <= 0 {
				x.W.Error("ERR invalid COUNT")
				return o, false
			}
			j++
		case cstr.ArgIs(opt, "epsilon") && more:
			if o.epsilon, ok = parseDouble(args[j+1]); !ok || o.epsilon <= 0 {
				x.W.Error("ERR invalid EPSILON")
				return o, false
			}
			j++
		case cstr.ArgIs(opt, "ef") && more:
			if o.ef, ok = parseInt(args[j+1]); !ok || o.ef <= 0 || o.ef > vsetMaxEF {
				x.W.Error(errVSetEF)
				return o, false
			}
			j++
		case cstr.ArgIs(opt, "filter-ef") && more:
			if o.filterEF, ok = parseInt(args[j+1]); !ok || o.filterEF <= 0 {
				x.W.Error("ERR invalid FILTER-EF")
				return o, false
			}
			j++
		case cstr.ArgIs(opt, "filter") && more:
			f, err := vset.CompileFilter(string(args[j+1]))
			if err != nil {
				x.W.Error("ERR " + err.Error())
				return o, false
			}
			o.filter = f
			j++
		default:
			x.W.Error("ERR syntax error in VSIM command")
			return o, false
		}
	}
	return o, true
}

func vdimCommand(x *command.Ctx) {
	s, ok := readVSet(x, x.Args[1])
	switch {
	case !ok:
	case s == nil:
		x.W.Error(errVSetNoKey)
	default:
		x.W.Int(int64(s.Dim()))
	}
}

func vcardCommand(x *command.Ctx) {
	if s, ok := readVSet(x, x.Args[1]); ok {
		if s == nil {
			x.W.Int(0)
			return
		}
		x.W.Int(int64(s.Len()))
	}
}

// vembCommand is VEMB key element [RAW]: the element's vector as stored,
// dequantized and de-normalized; with RAW the quantization's name, the
// stored bytes, the length before normalization and (Q8) the range.
func vembCommand(x *command.Ctx) {
	raw := false
	for _, opt := range x.Args[3:] {
		if !cstr.ArgIs(opt, "raw") {
			x.W.Error("ERR invalid option")
			return
		}
		raw = true
	}
	s, id, found, ok := readVSetElement(x)
	if !ok {
		return
	}
	if !found {
		x.W.Null()
		return
	}
	if raw {
		data, norm, rng := s.Raw(id)
		q8 := s.Quant() == vset.Q8
		x.W.Array(3 + boolInt(q8))
		x.W.Simple(s.Quant().RawName())
		x.W.Bulk(data)
		x.W.Double(float64(norm))
		if q8 {
			x.W.Double(float64(rng))
		}
		return
	}
	v := s.Vector(id)
	x.W.Array(len(v))
	for _, c := range v {
		x.W.Double(float64(c))
	}
}

// vsetattrCommand is VSETATTR key element json: 1 when set (an empty
// string removes the attributes), 0 without the key or element.
func vsetattrCommand(x *command.Ctx) {
	key := x.Args[1]
	e, found := x.LookupWrite(key)
	if x.WrongType(&e, found, keyspace.TypeVectorSet) {
		return
	}
	var id uint32
	if found {
		id, found = values.EntryVSet(&e).Find(x.Args[2])
	}
	if !found {
		x.W.Bool(false)
		return
	}
	values.EntryVSet(&e).SetAttr(id, x.Args[3])
	x.DB.ModifiedEntry(&e)
	x.W.Bool(true)
	vsetEvent(x, key, "vsetattr")
}

func vgetattrCommand(x *command.Ctx) {
	s, id, found, ok := readVSetElement(x)
	if !ok {
		return
	}
	if found && s.Attr(id) != nil {
		x.W.Bulk(s.Attr(id))
		return
	}
	x.W.Null()
}

// vlinksCommand is VLINKS key element [WITHSCORES]: the element's
// neighbours on each of its levels, highest first; with WITHSCORES a map
// of each to its similarity.
func vlinksCommand(x *command.Ctx) {
	if len(x.Args) == 4 && !cstr.ArgIs(x.Args[3], "withscores") || len(x.Args) > 4 {
		x.W.Error(command.ErrArity(x.Name))
		return
	}
	scores := len(x.Args) == 4
	s, id, found, ok := readVSetElement(x)
	if !ok {
		return
	}
	if !found {
		x.W.Null()
		return
	}
	levels := s.Links(id)
	x.W.Array(len(levels))
	for _, lv := range levels {
		if scores {
			x.W.Map(len(lv))
		} else {
			x.W.Array(len(lv))
		}
		for _, r := range lv {
			x.W.Bulk(s.Name(r.ID))
			if scores {
				x.W.Double(r.Similarity())
			}
		}
	}
}

// vinfoCommand is VINFO key: the set's parameters and sizes.
func vinfoCommand(x *command.Ctx) {
	s, ok := readVSet(x, x.Args[1])
	if !ok {
		return
	}
	if s == nil {
		x.W.NullArray()
		return
	}
	x.W.Map(9)
	x.W.Simple("quant-type")
	x.W.Simple(s.Quant().Name())
	for _, f := range [...]struct {
		name string
		n    int64
	}{
		{"hnsw-m", int64(s.M())},
		{"vector-dim", int64(s.Dim())},
		{"projection-input-dim", int64(s.ProjectionInput())},
		{"size", int64(s.Len())},
		{"max-level", int64(s.MaxLevel())},
		{"attributes-count", int64(s.Attributes())},
		{"vset-uid", int64(s.UID())},
		{"hnsw-max-node-uid", int64(s.LastNodeID())},
	} {
		x.W.Simple(f.name)
		x.W.Int(f.n)
	}
}

// vrandmemberCommand is VRANDMEMBER key [count]: one element, or count
// distinct ones (at most the set's size), or with a negative count that
// many picked independently.
func vrandmemberCommand(x *command.Ctx) {
	if len(x.Args) > 3 {
		x.W.Error(command.ErrArity(x.Name))
		return
	}
	withCount := len(x.Args) == 3
	count := int64(1)
	if withCount {
		var ok bool
		if count, ok = parseInt(x.Args[2]); !ok {
			x.W.Error("ERR COUNT value is not an integer")
			return
		}
		if count == 0 {
			x.W.Array(0)
			return
		}
	}
	s, ok := readVSet(x, x.Args[1])
	if !ok {
		return
	}
	if s == nil {
		if withCount {
			x.W.Array(0)
		} else {
			x.W.Null()
		}
		return
	}
	live := s.Live()
	if !withCount {
		x.W.Bulk(s.Name(live[rand.IntN(len(live))]))
		return
	}
	if count < 0 {
		n := -count
		x.W.Array(int(n))
		for range n {
			x.W.Bulk(s.Name(live[rand.IntN(len(live))]))
		}
		return
	}
	n := int(min(count, int64(len(live))))
	x.W.Array(n)
	if n > len(live)/5 {
		// Many of the set: a run of the node list from a random place, as
		// Redis does past a fifth (picking at random would mostly repeat).
		at := rand.IntN(len(live))
		for i := range n {
			x.W.Bulk(s.Name(live[(at+i)%len(live)]))
		}
		return
	}
	seen := make(map[uint32]bool, n)
	for len(seen) < n {
		id := live[rand.IntN(len(live))]
		if !seen[id] {
			seen[id] = true
			x.W.Bulk(s.Name(id))
		}
	}
}

func vismemberCommand(x *command.Ctx) {
	_, _, found, ok := readVSetElement(x)
	if !ok {
		return
	}
	x.W.Bool(found)
}

// rangeBound is one end of a VRANGE: "-", "+", "[element" or "(element".
type rangeBound struct {
	min, max, inclusive bool
	element             []byte
}

func parseRangeBound(b []byte) (rangeBound, bool) {
	switch {
	case len(b) == 1 && b[0] == '-':
		return rangeBound{min: true}, true
	case len(b) == 1 && b[0] == '+':
		return rangeBound{max: true}, true
	case len(b) > 1 && (b[0] == '[' || b[0] == '('):
		return rangeBound{inclusive: b[0] == '[', element: b[1:]}, true
	}
	return rangeBound{}, false
}

// vrangeCommand is VRANGE key start end [count]: the elements between
// start and end in byte order, at most count of them (all when count is
// negative or not given).
func vrangeCommand(x *command.Ctx) {
	if len(x.Args) > 5 {
		x.W.Error(command.ErrArity(x.Name))
		return
	}
	count := int64(-1)
	if len(x.Args) == 5 {
		var ok bool
		if count, ok = parseInt(x.Args[4]); !ok {
			x.W.Error("ERR invalid COUNT value")
			return
		}
	}
	start, ok := parseRangeBound(x.Args[2])
	if !ok {
		x.W.Error("ERR invalid start range format")
		return
	}
	end, ok := parseRangeBound(x.Args[3])
	if !ok {
		x.W.Error("ERR invalid end range format")
		return
	}
	if start.max || end.min {
		x.W.Error("ERR '-' can only be used as first argument, '+' only as second")
		return
	}
	s, ok := readVSet(x, x.Args[1])
	if !ok {
		return
	}
	if s == nil {
		x.W.Array(0)
		return
	}
	sorted := s.Sorted()
	from, to := 0, len(sorted)
	if !start.min {
		from = searchNames(s, sorted, start.element, !start.inclusive)
	}
	if !end.max {
		to = searchNames(s, sorted, end.element, end.inclusive)
	}
	to = max(to, from)
	if count >= 0 {
		to = min(to, from+int(min(count, int64(len(sorted)))))
	}
	x.W.Array(to - from)
	for _, id := range sorted[from:to] {
		x.W.Bulk(s.Name(id))
	}
}

// searchNames is the index of the first of sorted whose name is after
// name (or, without past, not before it).
func searchNames(s *vset.Set, sorted []uint32, name []byte, past bool) int {
	lo, hi := 0, len(sorted)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		c := bytes.Compare(s.Name(sorted[mid]), name)
		if c < 0 || past && c == 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}
