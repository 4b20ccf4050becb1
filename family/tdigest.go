package family

import (
	"math"

	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/prob"
	"github.com/keyhive/keyhive/keyspace"
)

// The t-digest family (Redis 8's TDIGEST.*), over internal/prob's merging
// digest. Queries read a merged copy of the nodes and leave the value as
// it is (Redis compresses the stored sketch on a query; the answers are
// the same, TDIGEST.INFO's unmerged counts may differ).

func registerTDigest(bind binder) {
	bind("tdigest.create", tdCreateCommand)
	bind("tdigest.add", tdAddCommand)
	bind("tdigest.merge", tdMergeCommand)
	bind("tdigest.reset", tdResetCommand)
	bind("tdigest.quantile", tdQuantileCommand)
	bind("tdigest.cdf", tdCDFCommand)
	bind("tdigest.rank", func(x *command.Ctx) { tdRank(x, false) })
	bind("tdigest.revrank", func(x *command.Ctx) { tdRank(x, true) })
	bind("tdigest.byrank", func(x *command.Ctx) { tdByRank(x, false) })
	bind("tdigest.byrevrank", func(x *command.Ctx) { tdByRank(x, true) })
	bind("tdigest.min", func(x *command.Ctx) { tdExtreme(x, false) })
	bind("tdigest.max", func(x *command.Ctx) { tdExtreme(x, true) })
	bind("tdigest.trimmed_mean", tdTrimmedMeanCommand)
	bind("tdigest.info", tdInfoCommand)
}

const (
	errTDMissing     = "ERR T-Digest: key does not exist"
	errTDExists      = "ERR T-Digest: key already exists"
	errTDCompParse   = "ERR T-Digest: error parsing compression parameter"
	errTDCompRange   = "ERR T-Digest: compression parameter needs to be a positive integer"
	errTDVal         = "ERR T-Digest: error parsing val parameter"
	errTDInfinite    = "ERR T-Digest: val parameter needs to be a finite number"
	errTDQuantile    = "ERR T-Digest: error parsing quantile"
	errTDQRange      = "ERR T-Digest: quantile should be in [0,1]"
	errTDCDF         = "ERR T-Digest: error parsing cdf"
	errTDValue       = "ERR T-Digest: error parsing value"
	errTDRank        = "ERR T-Digest: error parsing rank"
	errTDRankRange   = "ERR T-Digest: rank needs to be non negative"
	errTDLow         = "ERR T-Digest: error parsing low_cut_percentile"
	errTDHigh        = "ERR T-Digest: error parsing high_cut_percentile"
	errTDCutRange    = "ERR T-Digest: low_cut_percentile and high_cut_percentile should be in [0,1]"
	errTDCutOrder    = "ERR T-Digest: low_cut_percentile should be lower than high_cut_percentile"
	errTDNumKeys     = "ERR T-Digest: error parsing numkeys"
	errTDNumKeysPos  = "ERR T-Digest: numkeys needs to be a positive integer"
	tdDefaultCompres = 100
	tdMaxCompression = 1 << 20
)

// parseCompression reads a COMPRESSION argument, replying its errors.
func parseCompression(x *command.Ctx, arg []byte) (int64, bool) {
	c, ok := parseInt(arg)
	switch {
	case !ok:
		x.W.Error(errTDCompParse)
	case c <= 0 || c > tdMaxCompression:
		x.W.Error(errTDCompRange)
	default:
		return c, true
	}
	return 0, false
}

func tdCreateCommand(x *command.Ctx) {
	compression := int64(tdDefaultCompres)
	switch {
	case len(x.Args) == 4 && cstr.ArgIs(x.Args[2], "compression"):
		var ok bool
		if compression, ok = parseCompression(x, x.Args[3]); !ok {
			return
		}
	case len(x.Args) != 2:
		x.W.Error(command.ErrArity(x.Name))
		return
	}
	key := x.Args[1]
	e, found := x.LookupWrite(key)
	if found {
		x.W.Error(errTDExists)
		return
	}
	prob.InitTDigest(probCreate(x, &e, key, keyspace.TypeTDigest, prob.TDigestSize(compression)), compression)
	probEvent(x, key, "tdigest.create")
	x.W.OK()
}

// tdWrite finds key's digest for a change; it replies and reports false
// unless found.
func tdWrite(x *command.Ctx, key []byte) (e keyspace.Entry, ok bool) {
	e, found, ok := probLookup(x, key, keyspace.TypeTDigest)
	if ok && !found {
		x.W.Error(errTDMissing)
		return e, false
	}
	return e, ok
}

func tdAddCommand(x *command.Ctx) {
	for _, arg := range x.Args[2:] {
		v, ok := parseDouble(arg)
		if !ok {
			x.W.Error(errTDVal)
			return
		}
		if math.IsInf(v, 0) {
			x.W.Error(errTDInfinite)
			return
		}
	}
	e, ok := tdWrite(x, x.Args[1])
	if !ok {
		return
	}
	t := prob.TDigest(e.Value())
	var scratch []prob.Centroid
	for _, arg := range x.Args[2:] {
		v, _ := parseDouble(arg)
		scratch = t.Add(v, 1, scratch)
	}
	probChanged(x, &e, "tdigest.add")
	x.W.OK()
}

func tdResetCommand(x *command.Ctx) {
	e, ok := tdWrite(x, x.Args[1])
	if !ok {
		return
	}
	prob.TDigest(e.Value()).Reset()
	probChanged(x, &e, "tdigest.reset")
	x.W.OK()
}

func tdMergeCommand(x *command.Ctx) {
	n, ok := parseInt(x.Args[2])
	if !ok {
		x.W.Error(errTDNumKeys)
		return
	}
	if n < 1 {
		x.W.Error(errTDNumKeysPos)
		return
	}
	if n > int64(len(x.Args)-3) {
		x.W.Error(command.ErrArity(x.Name))
		return
	}
	compression, override := int64(0), false
	for i := 3 + int(n); i < len(x.Args); i++ {
		switch {
		case cstr.ArgIs(x.Args[i], "compression") && i+1 < len(x.Args):
			i++
			if compression, ok = parseCompression(x, x.Args[i]); !ok {
				return
			}
		case cstr.ArgIs(x.Args[i], "override"):
			override = true
		default:
			x.W.Error(command.ErrSyntax)
			return
		}
	}
	// Read every source first: the destination may be one of them.
	var nodes []prob.Centroid
	lo, hi := math.Inf(1), math.Inf(-1)
	var maxCompression int64
	gather := func(t prob.TDigest) {
		nodes = t.Nodes(nodes)
		if t.Observations() > 0 {
			lo, hi = min(lo, t.Min()), max(hi, t.Max())
		}
		maxCompression = max(maxCompression, t.Compression())
	}
	for _, k := range x.Args[3 : 3+n] {
		src, found, ok := x.ReadTyped(k, keyspace.TypeTDigest)
		if !ok {
			return
		}
		if !found {
			x.W.Error(errTDMissing)
			return
		}
		gather(prob.TDigest(src.Value()))
	}
	key := x.Args[1]
	e, found, ok := probLookup(x, key, keyspace.TypeTDigest)
	if !ok {
		return
	}
	var expireAt int64
	if found {
		dst := prob.TDigest(e.Value())
		expireAt = e.ExpireAt()
		if !override {
			if compression == 0 {
				compression = dst.Compression()
			}
			gather(dst)
		}
	}
	if compression == 0 {
		compression = maxCompression
	}
	merged := prob.MergeCentroids(nodes, float64(compression))
	size := prob.TDigestSize(compression)
	var b []byte
	if found && len(e.Value()) == size {
		b = e.Value()
	} else {
		b = x.DB.PutSized(&e, key, keyspace.TypeTDigest, keyspace.EncRaw, size, expireAt, x.Now)
	}
	t := prob.InitTDigest(b, compression)
	if len(merged) > 0 {
		t.SetMerged(merged, lo, hi, 1)
	}
	probChanged(x, &e, "tdigest.merge")
	x.W.OK()
}

// tdSummary reads key's digest merged; it replies and reports false
// unless found.
func tdSummary(x *command.Ctx, key []byte) (prob.Summary, bool) {
	e, found, ok := x.ReadTyped(key, keyspace.TypeTDigest)
	if !ok {
		return prob.Summary{}, false
	}
	if !found {
		x.W.Error(errTDMissing)
		return prob.Summary{}, false
	}
	return prob.TDigest(e.Value()).Summary(nil), true
}

// tdDoubles parses the doubles from argument 2 on, replying errText for
// one that is not.
func tdDoubles(x *command.Ctx, errText string) ([]float64, bool) {
	vs := make([]float64, 0, len(x.Args)-2)
	for _, arg := range x.Args[2:] {
		v, ok := parseDouble(arg)
		if !ok {
			x.W.Error(errText)
			return nil, false
		}
		vs = append(vs, v)
	}
	return vs, true
}

func tdQuantileCommand(x *command.Ctx) {
	qs, ok := tdDoubles(x, errTDQuantile)
	if !ok {
		return
	}
	for _, q := range qs {
		if q < 0 || q > 1 {
			x.W.Error(errTDQRange)
			return
		}
	}
	s, ok := tdSummary(x, x.Args[1])
	if !ok {
		return
	}
	x.W.Array(len(qs))
	for _, q := range qs {
		replyDouble(x, s.Quantile(q))
	}
}

func tdCDFCommand(x *command.Ctx) {
	vs, ok := tdDoubles(x, errTDCDF)
	if !ok {
		return
	}
	s, ok := tdSummary(x, x.Args[1])
	if !ok {
		return
	}
	x.W.Array(len(vs))
	for _, v := range vs {
		replyDouble(x, s.CDF(v))
	}
}

func tdRank(x *command.Ctx, reverse bool) {
	vs, ok := tdDoubles(x, errTDValue)
	if !ok {
		return
	}
	s, ok := tdSummary(x, x.Args[1])
	if !ok {
		return
	}
	x.W.Array(len(vs))
	for _, v := range vs {
		switch {
		case s.Total == 0:
			x.W.Int(-2)
		case reverse:
			x.W.Int(s.RevRank(v))
		default:
			x.W.Int(s.Rank(v))
		}
	}
}

func tdByRank(x *command.Ctx, reverse bool) {
	ranks := make([]int64, 0, len(x.Args)-2)
	for _, arg := range x.Args[2:] {
		r, ok := parseInt(arg)
		if !ok {
			x.W.Error(errTDRank)
			return
		}
		if r < 0 {
			x.W.Error(errTDRankRange)
			return
		}
		ranks = append(ranks, r)
	}
	s, ok := tdSummary(x, x.Args[1])
	if !ok {
		return
	}
	x.W.Array(len(ranks))
	for _, r := range ranks {
		switch {
		case s.Total == 0:
			replyDouble(x, math.NaN())
		case float64(r) >= s.Total && reverse:
			replyDouble(x, math.Inf(-1))
		case float64(r) >= s.Total:
			replyDouble(x, math.Inf(1))
		case reverse:
			replyDouble(x, s.ValueAt(s.Total-1-float64(r)))
		default:
			replyDouble(x, s.ValueAt(float64(r)))
		}
	}
}

func tdExtreme(x *command.Ctx, largest bool) {
	e, found, ok := x.ReadTyped(x.Args[1], keyspace.TypeTDigest)
	if !ok {
		return
	}
	if !found {
		x.W.Error(errTDMissing)
		return
	}
	t := prob.TDigest(e.Value())
	if largest {
		replyDouble(x, t.Max())
	} else {
		replyDouble(x, t.Min())
	}
}

func tdTrimmedMeanCommand(x *command.Ctx) {
	lo, ok := parseDouble(x.Args[2])
	if !ok {
		x.W.Error(errTDLow)
		return
	}
	hi, ok := parseDouble(x.Args[3])
	if !ok {
		x.W.Error(errTDHigh)
		return
	}
	switch {
	case lo < 0 || lo > 1 || hi < 0 || hi > 1:
		x.W.Error(errTDCutRange)
		return
	case lo >= hi:
		x.W.Error(errTDCutOrder)
		return
	}
	s, ok := tdSummary(x, x.Args[1])
	if !ok {
		return
	}
	replyDouble(x, s.TrimmedMean(lo, hi))
}

func tdInfoCommand(x *command.Ctx) {
	e, found, ok := x.ReadTyped(x.Args[1], keyspace.TypeTDigest)
	if !ok {
		return
	}
	if !found {
		x.W.Error(errTDMissing)
		return
	}
	t := prob.TDigest(e.Value())
	x.W.Map(9)
	for _, f := range []struct {
		name  string
		value int64
	}{
		{"Compression", t.Compression()},
		{"Capacity", int64(t.Capacity())},
		{"Merged nodes", int64(t.MergedNodes())},
		{"Unmerged nodes", int64(t.UnmergedNodes())},
		{"Merged weight", int64(t.MergedWeight())},
		{"Unmerged weight", int64(t.UnmergedWeight())},
		{"Observations", int64(t.Observations())},
		{"Total compressions", int64(t.Compressions())},
		{"Memory usage", int64(len(t))},
	} {
		x.W.Simple(f.name)
		x.W.Int(f.value)
	}
}
