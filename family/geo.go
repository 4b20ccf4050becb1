package family

import (
	"math"
	"slices"
	"strconv"

	"github.com/keyhive/keyhive/command"
	"github.com/keyhive/keyhive/config"
	"github.com/keyhive/keyhive/internal/cstr"
	"github.com/keyhive/keyhive/internal/geohash"
	"github.com/keyhive/keyhive/internal/strnum"
	"github.com/keyhive/keyhive/values"
)

// The geo family. A geo set is an ordinary sorted set whose scores are 52-bit
// geohashes (internal/geohash): GEOADD is ZADD with computed scores, and the
// searches read score ranges of the sorted set.

func registerGeo(bind binder) {
	bind("geoadd", geoaddCommand)
	bind("geodist", geodistCommand)
	bind("geohash", geohashCommand)
	bind("geopos", geoposCommand)
	bind("geosearch", func(x *command.Ctx) { geoSearchCommand(x, geoSearch) })
	bind("geosearchstore", func(x *command.Ctx) { geoSearchCommand(x, geoSearch|geoSearchStore) })
	bind("georadius", func(x *command.Ctx) { geoSearchCommand(x, geoCoords) })
	bind("georadius_ro", func(x *command.Ctx) { geoSearchCommand(x, geoCoords|geoNoStore) })
	bind("georadiusbymember", func(x *command.Ctx) { geoSearchCommand(x, geoMember) })
	bind("georadiusbymember_ro", func(x *command.Ctx) { geoSearchCommand(x, geoMember|geoNoStore) })
}

var argZADDLower = []byte("zadd") // GEOADD propagates as Redis builds it

// geoaddCommand turns the coordinates into scores and adds them as ZADD
// does, which Redis propagates (and notifies) in GEOADD's place.
func geoaddCommand(x *command.Ctx) {
	lonAt, f := 2, zaddFlags{}
options:
	for ; lonAt < len(x.Args); lonAt++ {
		switch a := x.Args[lonAt]; {
		case cstr.ArgIs(a, "nx"):
			f.nx = true
		case cstr.ArgIs(a, "xx"):
			f.xx = true
		case cstr.ArgIs(a, "ch"):
			f.ch = true
		default:
			break options
		}
	}
	n := (len(x.Args) - lonAt) / 3
	if (len(x.Args)-lonAt)%3 != 0 || (f.nx && f.xx) || n == 0 { // no pair: ZADD's syntax error
		x.W.Error(command.ErrSyntax)
		return
	}
	var local [16]float64
	scores := local[:0]
	for i := 0; i < n; i++ {
		lon, lat, ok := lonLat(x, x.Args[lonAt+3*i:])
		if !ok {
			return
		}
		scores = append(scores, float64(geohash.Encode(lon, lat)))
	}
	args := x.Args
	zaddPairs(x, f, n, func(i int) (float64, []byte) { return scores[i], args[lonAt+3*i+2] })
	if x.Dirty > 0 && x.Propagating() {
		argv := make([][]byte, lonAt+2*n)
		argv[0] = argZADDLower
		copy(argv[1:], args[1:lonAt])
		for i, score := range scores {
			argv[lonAt+2*i] = strconv.AppendUint(nil, uint64(score), 10)
			argv[lonAt+2*i+1] = args[lonAt+3*i+2]
		}
		x.PropagateAs(argv...)
	}
}

// lonLat parses a longitude and a latitude, replying Redis's error when they
// are not numbers or not a storable point.
func lonLat(x *command.Ctx, args [][]byte) (lon, lat float64, ok bool) {
	if lon, ok = parseScore(args[0]); !ok {
		x.W.Error(command.ErrNotFloat)
		return 0, 0, false
	}
	if lat, ok = parseScore(args[1]); !ok {
		x.W.Error(command.ErrNotFloat)
		return 0, 0, false
	}
	if !geohash.ValidLonLat(lon, lat) {
		x.W.Error("ERR invalid longitude,latitude pair " + cFixed6(lon) + "," + cFixed6(lat))
		return 0, 0, false
	}
	return lon, lat, true
}

// cFixed6 formats f as C's "%f".
func cFixed6(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	return strconv.FormatFloat(f, 'f', 6, 64)
}

// parseUnit parses a distance unit, returning meters per unit.
func parseUnit(x *command.Ctx, arg []byte) (float64, bool) {
	switch {
	case cstr.ArgIs(arg, "m"):
		return 1, true
	case cstr.ArgIs(arg, "km"):
		return 1000, true
	case cstr.ArgIs(arg, "ft"):
		return 0.3048, true
	case cstr.ArgIs(arg, "mi"):
		return 1609.34, true
	}
	x.W.Error("ERR unsupported unit provided. please use M, KM, FT, MI")
	return 0, false
}

// distance writes a distance as Redis does: a bulk string with 4 decimals.
func distance(x *command.Ctx, d float64) {
	var tmp [32]byte
	x.W.Bulk(strconv.AppendFloat(tmp[:0], d, 'f', 4, 64))
}

func geodistCommand(x *command.Ctx) {
	toMeters := 1.0
	switch {
	case len(x.Args) == 5:
		var ok bool
		if toMeters, ok = parseUnit(x, x.Args[4]); !ok {
			return
		}
	case len(x.Args) > 5:
		x.W.Error(command.ErrSyntax)
		return
	}
	z, found, ok := command.ReadAs[values.ZSetView](x, x.Args[1])
	if !ok {
		return
	}
	s1, ok1 := z.Score(x.Args[2])
	s2, ok2 := z.Score(x.Args[3])
	if !found || !ok1 || !ok2 {
		x.W.Null()
		return
	}
	lon1, lat1 := geohash.Decode(s1)
	lon2, lat2 := geohash.Decode(s2)
	distance(x, geohash.Distance(lon1, lat1, lon2, lat2)/toMeters)
}

func geohashCommand(x *command.Ctx) {
	replyMemberScores(x, x.W.Null, func(s float64) {
		var tmp [11]byte
		x.W.Bulk(geohash.AppendString(tmp[:0], s))
	})
}

func geoposCommand(x *command.Ctx) {
	replyMemberScores(x, x.W.NullArray, func(s float64) {
		lon, lat := geohash.Decode(s)
		x.W.Array(2)
		x.W.HumanDouble(lon)
		x.W.HumanDouble(lat)
	})
}

// replyMemberScores replies with one element per member argument of
// GEOHASH and GEOPOS: missing for a member not in the set, else found with
// its score.
func replyMemberScores(x *command.Ctx, missing func(), found func(score float64)) {
	z, exists, ok := command.ReadAs[values.ZSetView](x, x.Args[1])
	if !ok {
		return
	}
	x.W.Array(len(x.Args) - 2)
	for _, m := range x.Args[2:] {
		if s, ok := z.Score(m); exists && ok {
			found(s)
		} else {
			missing()
		}
	}
}

// Variants of the search commands, as Redis's georadiusGeneric names them.
const (
	geoCoords      = 1 << iota // GEORADIUS: centre and radius as arguments
	geoMember                  // GEORADIUSBYMEMBER: centre at a member
	geoNoStore                 // the _RO forms: no STORE or STOREDIST
	geoSearch                  // GEOSEARCH's FROM... and BY... options
	geoSearchStore             // GEOSEARCHSTORE: the destination first, STOREDIST a flag
)

const errGeoMember = "ERR could not decode requested zset member"

// geoPoint is a search result; member indexes the command's member buffer.
type geoPoint struct {
	lon, lat, dist, score float64
	member                [2]int
}

// geoKept is the memory of a client's geo searches, reused across its
// commands in x.Reuse.
type geoKept struct{ points []geoPoint }

func keptPoints(x *command.Ctx) *geoKept {
	k, ok := x.Reuse.(*geoKept)
	if !ok {
		k = new(geoKept)
		x.Reuse = k
	}
	return k
}

// geoQuery is a parsed search command.
type geoQuery struct {
	shape                          geohash.Shape
	store                          []byte // the destination of a STORE form
	storeDist                      bool
	withDist, withHash, withCoord  bool
	anyFirst                       bool // ANY: the first COUNT found, not the nearest
	sort                           int  // 1 ascending, -1 descending
	count                          int64
	fromMember, fromLonLat, radius bool // which GEOSEARCH options were given
	box                            bool
}

// geoSearchCommand is GEOSEARCH, GEOSEARCHSTORE, GEORADIUS,
// GEORADIUSBYMEMBER and their _RO forms.
func geoSearchCommand(x *command.Ctx, flags int) {
	src := 1
	if flags&geoSearchStore != 0 {
		src = 2
	}
	z, found, ok := command.ReadAs[values.ZSetView](x, x.Args[src])
	if !ok {
		return
	}
	q, ok := parseGeoQuery(x, flags, z, found)
	if !ok {
		return
	}
	if !found {
		if q.store == nil {
			x.W.Array(0)
			return
		}
		if x.DB.Delete(q.store) {
			x.Notify(config.EventGeneric, "del", q.store)
			x.Dirty++
		}
		x.W.Int(0)
		return
	}
	// COUNT keeps the nearest: it implies ASC unless ANY takes the first found.
	if q.count != 0 && q.sort == 0 && !q.anyFirst {
		q.sort = 1
	}
	limit := 0
	if q.anyFirst {
		limit = int(q.count)
	}
	kept := keptPoints(x)
	points := geoFind(x, z, &q.shape, limit, kept.points[:0])
	if cap(points) <= 4096 { // a huge result's memory is not kept per client
		kept.points = points
	}
	if len(points) == 0 && q.store == nil {
		x.W.Array(0)
		return
	}
	// The exact distance costs more than the search's test: it is computed
	// only for what uses it.
	if q.sort != 0 || q.withDist || q.storeDist {
		for i := range points {
			points[i].dist = q.shape.DistanceTo(points[i].lon, points[i].lat)
		}
	}
	if q.sort != 0 {
		slices.SortStableFunc(points, func(a, b geoPoint) int {
			if a.dist == b.dist {
				return 0
			}
			if (a.dist > b.dist) == (q.sort > 0) {
				return 1
			}
			return -1
		})
	}
	if q.count != 0 && int64(len(points)) > q.count {
		points = points[:q.count]
	}
	members := x.Collect.Bytes()
	if q.store != nil {
		geoStore(x, &q, points, members, flags&geoSearch != 0)
		return
	}
	extra := 0
	for _, on := range [...]bool{q.withDist, q.withHash, q.withCoord} {
		if on {
			extra++
		}
	}
	x.W.Array(len(points))
	for _, p := range points {
		if extra > 0 {
			x.W.Array(extra + 1)
		}
		x.W.Bulk(members[p.member[0]:p.member[1]])
		if q.withDist {
			distance(x, p.dist/q.shape.Unit)
		}
		if q.withHash {
			x.W.Int(int64(p.score))
		}
		if q.withCoord {
			x.W.Array(2)
			x.W.HumanDouble(p.lon)
			x.W.HumanDouble(p.lat)
		}
	}
}

// parseGeoQuery parses a search command's arguments after the source key
// was looked up (z, found), checking in Redis's order so the same error wins.
func parseGeoQuery(x *command.Ctx, flags int, z values.ZSetView, found bool) (q geoQuery, ok bool) {
	base := 0
	switch {
	case flags&geoCoords != 0:
		base = 6
		if q.shape.Lon, q.shape.Lat, ok = lonLat(x, x.Args[2:]); !ok {
			return q, false
		}
		if q.shape.Radius, q.shape.Unit, ok = radius(x, x.Args[4:]); !ok {
			return q, false
		}
	case flags&geoMember != 0 && !found:
		base = 5 // the reply is known, but the options are still checked
	case flags&geoMember != 0:
		base = 5
		if !memberLonLat(x, z, x.Args[2], &q.shape) {
			return q, false
		}
		if q.shape.Radius, q.shape.Unit, ok = radius(x, x.Args[3:]); !ok {
			return q, false
		}
	default:
		base = 2
		if flags&geoSearchStore != 0 {
			base = 3
			q.store = x.Args[1]
		}
	}
	rest := x.Args[base:]
	for i := 0; i < len(rest); i++ {
		a, left := rest[i], len(rest)-i-1
		switch {
		case cstr.ArgIs(a, "withdist"):
			q.withDist = true
		case cstr.ArgIs(a, "withhash"):
			q.withHash = true
		case cstr.ArgIs(a, "withcoord"):
			q.withCoord = true
		case cstr.ArgIs(a, "any"):
			q.anyFirst = true
		case cstr.ArgIs(a, "asc"):
			q.sort = 1
		case cstr.ArgIs(a, "desc"):
			q.sort = -1
		case cstr.ArgIs(a, "count") && left >= 1:
			if q.count, ok = strnum.ParseInt(rest[i+1]); !ok {
				x.W.Error(command.ErrNotInt)
				return q, false
			}
			if q.count <= 0 {
				x.W.Error("ERR COUNT must be > 0")
				return q, false
			}
			i++
		case (cstr.ArgIs(a, "store") || cstr.ArgIs(a, "storedist")) && left >= 1 && flags&(geoNoStore|geoSearch) == 0:
			q.store, q.storeDist = rest[i+1], cstr.ArgIs(a, "storedist")
			i++
		case cstr.ArgIs(a, "storedist") && flags&geoSearchStore != 0:
			q.storeDist = true
		case cstr.ArgIs(a, "frommember") && left >= 1 && flags&geoSearch != 0 && !q.fromLonLat:
			// Without a source key the member is not looked up: the
			// reply is empty once the options are checked.
			if found && !memberLonLat(x, z, rest[i+1], &q.shape) {
				return q, false
			}
			q.fromMember = true
			i++
		case cstr.ArgIs(a, "fromlonlat") && left >= 2 && flags&geoSearch != 0 && !q.fromMember:
			if q.shape.Lon, q.shape.Lat, ok = lonLat(x, rest[i+1:]); !ok {
				return q, false
			}
			q.fromLonLat = true
			i += 2
		case cstr.ArgIs(a, "byradius") && left >= 2 && flags&geoSearch != 0 && !q.box:
			if q.shape.Radius, q.shape.Unit, ok = radius(x, rest[i+1:]); !ok {
				return q, false
			}
			q.shape.Box, q.radius = false, true
			i += 2
		case cstr.ArgIs(a, "bybox") && left >= 3 && flags&geoSearch != 0 && !q.radius:
			if !box(x, rest[i+1:], &q.shape) {
				return q, false
			}
			q.shape.Box, q.box = true, true
			i += 3
		default:
			x.W.Error(command.ErrSyntax)
			return q, false
		}
	}
	switch {
	case q.store != nil && (q.withDist || q.withHash || q.withCoord):
		what := "STORE option in GEORADIUS"
		if flags&geoSearchStore != 0 {
			what = "GEOSEARCHSTORE"
		}
		x.W.Error("ERR " + what + " is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
	case flags&geoSearch != 0 && !q.fromMember && !q.fromLonLat:
		x.W.Error("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + cstr.String(x.Args[0]))
	case flags&geoSearch != 0 && !q.radius && !q.box:
		x.W.Error("ERR exactly one of BYRADIUS and BYBOX can be specified for " + cstr.String(x.Args[0]))
	case q.anyFirst && q.count == 0:
		x.W.Error("ERR the ANY argument requires COUNT argument")
	default:
		return q, true
	}
	return q, false
}

// geoFind appends the points within the shape to points, in the order Redis
// finds them (box by box, by score within a box), stopping at limit when it
// is not 0; member names are copied into x.Collect (distances are left 0).
func geoFind(x *command.Ctx, z values.ZSetView, shape *geohash.Shape, limit int, points []geoPoint) []geoPoint {
	x.Collect.Reset()
	var boxes [9]geohash.Hash
	for _, box := range shape.AppendBoxes(boxes[:0]) {
		if limit > 0 && len(points) >= limit {
			break
		}
		lo, hi := geohash.ScoreRange(box)
		z.EachInScores(float64(lo), float64(hi), func(m []byte, score float64) bool {
			if lon, lat, in := shape.IncludesScore(score); in {
				start, end := x.Collect.AppendBytes(m)
				points = append(points, geoPoint{lon: lon, lat: lat, score: score, member: [2]int{start, end}})
			}
			return limit == 0 || len(points) < limit
		})
	}
	return points
}

// geoStore stores the results at the query's destination as a sorted set
// (scores the geohashes, or with STOREDIST the distances in the query's
// unit); no result deletes it.
func geoStore(x *command.Ctx, q *geoQuery, points []geoPoint, members []byte, search bool) {
	o := &values.ZSetObject{}
	for _, p := range points {
		score := p.score
		if q.storeDist {
			score = p.dist / q.shape.Unit
		}
		o.Add(members[p.member[0]:p.member[1]], score)
	}
	event := "georadiusstore"
	if search {
		event = "geosearchstore"
	}
	if n := storeZSet(x, q.store, o, event); n > 1 {
		x.Dirty += n - 1 // Redis counts every stored member
	}
	x.W.Int(int64(len(points)))
}

// memberLonLat centres the shape on a member, replying Redis's error when the
// member is missing.
func memberLonLat(x *command.Ctx, z values.ZSetView, member []byte, shape *geohash.Shape) bool {
	score, ok := z.Score(member)
	if !ok {
		x.W.Error(errGeoMember)
		return false
	}
	shape.Lon, shape.Lat = geohash.Decode(score)
	return true
}

// radius parses a radius and its unit.
func radius(x *command.Ctx, args [][]byte) (radius, unit float64, ok bool) {
	if radius, ok = parseScore(args[0]); !ok {
		x.W.Error("ERR need numeric radius")
		return 0, 0, false
	}
	if radius < 0 {
		x.W.Error("ERR radius cannot be negative")
		return 0, 0, false
	}
	unit, ok = parseUnit(x, args[1])
	return radius, unit, ok
}

// box parses BYBOX's width, height and unit into shape.
func box(x *command.Ctx, args [][]byte, shape *geohash.Shape) bool {
	w, ok := parseScore(args[0])
	if !ok {
		x.W.Error("ERR need numeric width")
		return false
	}
	h, ok := parseScore(args[1])
	if !ok {
		x.W.Error("ERR need numeric height")
		return false
	}
	if h < 0 || w < 0 {
		x.W.Error("ERR height or width cannot be negative")
		return false
	}
	shape.Width, shape.Height = w, h
	shape.Unit, ok = parseUnit(x, args[2])
	return ok
}
