package family

import (
	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/prob"
	"github.com/keyhive/keyhive/keyspace"
)

// The Count-Min sketch family (Redis 8's CMS.*), over internal/prob's
// sketch. A sketch is created only by CMS.INITBYDIM or CMS.INITBYPROB.

func registerCMS(bind binder) {
	bind("cms.initbydim", cmsInitByDimCommand)
	bind("cms.initbyprob", cmsInitByProbCommand)
	bind("cms.incrby", cmsIncrbyCommand)
	bind("cms.query", cmsQueryCommand)
	bind("cms.merge", cmsMergeCommand)
	bind("cms.info", cmsInfoCommand)
}

const (
	errCMSMissing   = "CMS: key does not exist"
	errCMSExists    = "CMS: key already exists"
	errCMSWidth     = "CMS: invalid width"
	errCMSDepth     = "CMS: invalid depth"
	errCMSError     = "CMS: invalid overestimation value"
	errCMSProb      = "CMS: invalid prob value"
	errCMSNumber    = "CMS: Cannot parse number"
	errCMSDims      = "CMS: width/depth is not equal"
	errCMSNumKeys   = "CMS: invalid numkeys"
	errCMSWeights   = "CMS: wrong number of keys/weights"
	errCMSWeight    = "CMS: invalid weight value"
	errCMSMergeOver = "CMS: MERGE overflow"
	cmsMaxDim       = 1 << 31
)

func cmsInit(x *command.Ctx, width, depth uint64) {
	if width*depth > probMaxBytes/4 {
		x.W.Error(errBFTooLarge)
		return
	}
	key := x.Args[1]
	e, found := x.LookupWrite(key)
	if found {
		x.W.Error(errCMSExists)
		return
	}
	prob.InitCMS(probCreate(x, &e, key, keyspace.TypeCMS, prob.CMSSize(width, depth)), width, depth)
	probEvent(x, key, "cms.init")
	x.W.OK()
}

func cmsInitByDimCommand(x *command.Ctx) {
	width, ok := parseInt(x.Args[2])
	if !ok || width < 1 || width > cmsMaxDim {
		x.W.Error(errCMSWidth)
		return
	}
	depth, ok := parseInt(x.Args[3])
	if !ok || depth < 1 || depth > cmsMaxDim {
		x.W.Error(errCMSDepth)
		return
	}
	cmsInit(x, uint64(width), uint64(depth))
}

func cmsInitByProbCommand(x *command.Ctx) {
	errorRate, ok := parseDouble(x.Args[2])
	if !ok || !(errorRate > 0 && errorRate < 1) {
		x.W.Error(errCMSError)
		return
	}
	probability, ok := parseDouble(x.Args[3])
	if !ok || !(probability > 0 && probability < 1) {
		x.W.Error(errCMSProb)
		return
	}
	width, depth := prob.CMSDims(errorRate, probability)
	if width > cmsMaxDim {
		x.W.Error(errCMSError)
		return
	}
	cmsInit(x, width, depth)
}

// cmsRead finds key's sketch; it replies and reports false unless found.
func cmsRead(x *command.Ctx, key []byte) (prob.CMS, bool) {
	e, found, ok := x.ReadTyped(key, keyspace.TypeCMS)
	if !ok {
		return nil, false
	}
	if !found {
		x.W.Error(errCMSMissing)
		return nil, false
	}
	return prob.CMS(e.Value()), true
}

func cmsIncrbyCommand(x *command.Ctx) {
	if len(x.Args)%2 != 0 {
		x.W.Error(command.ErrArity(x.Name))
		return
	}
	key := x.Args[1]
	e, found, ok := probLookup(x, key, keyspace.TypeCMS)
	if !ok {
		return
	}
	if !found {
		x.W.Error(errCMSMissing)
		return
	}
	s := prob.CMS(e.Value())
	for i := 2; i < len(x.Args); i += 2 {
		by, ok := parseInt(x.Args[i+1])
		if !ok || by < 0 {
			x.W.Error(errCMSNumber)
			return
		}
		if !s.CanIncr(x.Args[i], uint64(by)) {
			x.W.Error(prob.ErrCMSOverflow.Error())
			return
		}
	}
	x.W.Array((len(x.Args) - 2) / 2)
	for i := 2; i < len(x.Args); i += 2 {
		by, _ := parseInt(x.Args[i+1])
		x.W.Int(int64(s.Incr(x.Args[i], uint64(by))))
	}
	probChanged(x, &e, "cms.incrby")
}

func cmsQueryCommand(x *command.Ctx) {
	s, ok := cmsRead(x, x.Args[1])
	if !ok {
		return
	}
	x.W.Array(len(x.Args) - 2)
	for _, item := range x.Args[2:] {
		x.W.Int(int64(s.Query(item)))
	}
}

func cmsMergeCommand(x *command.Ctx) {
	n, ok := parseInt(x.Args[2])
	if !ok || n < 1 || n > int64(len(x.Args)-3) {
		x.W.Error(errCMSNumKeys)
		return
	}
	srcKeys := x.Args[3 : 3+n]
	rest := x.Args[3+n:]
	weights := make([]int64, n)
	for i := range weights {
		weights[i] = 1
	}
	if len(rest) > 0 {
		if !cstr.ArgIs(rest[0], "weights") || int64(len(rest)-1) != n {
			x.W.Error(errCMSWeights)
			return
		}
		for i, w := range rest[1:] {
			if weights[i], ok = parseInt(w); !ok {
				x.W.Error(errCMSWeight)
				return
			}
		}
	}
	key := x.Args[1]
	e, found, ok := probLookup(x, key, keyspace.TypeCMS)
	if !ok {
		return
	}
	if !found {
		x.W.Error(errCMSMissing)
		return
	}
	dst := prob.CMS(e.Value())
	srcs := make([]prob.CMS, n)
	for i, k := range srcKeys {
		if srcs[i], ok = cmsRead(x, k); !ok {
			return
		}
		if srcs[i].Width() != dst.Width() || srcs[i].Depth() != dst.Depth() {
			x.W.Error(errCMSDims)
			return
		}
	}
	if !dst.Merge(srcs, weights) {
		x.W.Error(errCMSMergeOver)
		return
	}
	probChanged(x, &e, "cms.merge")
	x.W.OK()
}

func cmsInfoCommand(x *command.Ctx) {
	s, ok := cmsRead(x, x.Args[1])
	if !ok {
		return
	}
	x.W.Map(3)
	x.W.Simple("width")
	x.W.Int(int64(s.Width()))
	x.W.Simple("depth")
	x.W.Int(int64(s.Depth()))
	x.W.Simple("count")
	x.W.Int(int64(s.Count()))
}
