// Package geohash is the geometry behind Redis's geo commands: a point is a
// 52-bit interleaved geohash (26 bits of latitude in the even bits, 26 of
// longitude in the odd bits, over latitudes limited to the Web Mercator range)
// stored as a sorted set score; a search covers the query shape with the
// geohash box of the centre and its eight neighbours at a step (precision)
// chosen from the radius, then checks each candidate's distance.
//
// Operation order follows Redis 7.0 wherever it decides a result (which box
// is searched, the order candidates are found in, distances compared with a
// radius), so searches return the same members in the same order.
package geohash

import "math"

// Coordinate limits: the latitude limit is where Web Mercator is square.
const (
	LongMin = -180.0
	LongMax = 180.0
	LatMin  = -85.05112878
	LatMax  = 85.05112878

	// StepMax is the precision of stored points: 26 bits per coordinate.
	StepMax = 26

	earthRadius = 6372797.560856 // meters, as Redis uses it
	mercatorMax = 20037726.37
)

// degToRad is computed in float64 arithmetic, as C's M_PI / 180.0 is, not
// as an exact constant: the last bit matters to which boxes a search covers.
var pi = math.Pi
var degToRad = pi / 180.0

// Hash is a geohash of step bits per coordinate.
type Hash struct {
	Bits uint64
	Step uint8
}

func (h Hash) isZero() bool { return h.Bits == 0 && h.Step == 0 }

// Range is an interval of one coordinate.
type Range struct{ Min, Max float64 }

// Area is the box a hash stands for.
type Area struct {
	Hash      Hash
	Long, Lat Range
}

var (
	longRange = Range{LongMin, LongMax}
	latRange  = Range{LatMin, LatMax}
	// standardLat is the latitude range of standard geohash strings.
	standardLat = Range{-90, 90}
)

// ValidLonLat reports whether a point can be stored.
func ValidLonLat(lon, lat float64) bool {
	return lon >= LongMin && lon <= LongMax && lat >= LatMin && lat <= LatMax
}

// encode hashes a point at step bits per coordinate within the ranges.
func encode(lonR, latR Range, lon, lat float64, step uint8) (Hash, bool) {
	if !ValidLonLat(lon, lat) || lat < latR.Min || lat > latR.Max || lon < lonR.Min || lon > lonR.Max {
		return Hash{Step: step}, false
	}
	latOffset := (lat - latR.Min) / (latR.Max - latR.Min)
	lonOffset := (lon - lonR.Min) / (lonR.Max - lonR.Min)
	latOffset *= float64(uint64(1) << step)
	lonOffset *= float64(uint64(1) << step)
	return Hash{interleave(uint32(latOffset), uint32(lonOffset)), step}, true
}

// Encode returns the 52-bit score of a valid point.
func Encode(lon, lat float64) uint64 {
	h, _ := encode(longRange, latRange, lon, lat, StepMax)
	return h.Bits
}

// spread moves the low 32 bits of v to the even bit positions.
func spread(v uint64) uint64 {
	v = (v | v<<16) & 0x0000FFFF0000FFFF
	v = (v | v<<8) & 0x00FF00FF00FF00FF
	v = (v | v<<4) & 0x0F0F0F0F0F0F0F0F
	v = (v | v<<2) & 0x3333333333333333
	return (v | v<<1) & 0x5555555555555555
}

// squash gathers the even bits of v into its low 32 bits.
func squash(v uint64) uint64 {
	v &= 0x5555555555555555
	v = (v | v>>1) & 0x3333333333333333
	v = (v | v>>2) & 0x0F0F0F0F0F0F0F0F
	v = (v | v>>4) & 0x00FF00FF00FF00FF
	v = (v | v>>8) & 0x0000FFFF0000FFFF
	return (v | v>>16) & 0x00000000FFFFFFFF
}

func interleave(lat, lon uint32) uint64 { return spread(uint64(lat)) | spread(uint64(lon))<<1 }

func decode(lonR, latR Range, h Hash) Area {
	ilat := uint32(squash(h.Bits))
	ilon := uint32(squash(h.Bits >> 1))
	latScale := latR.Max - latR.Min
	lonScale := lonR.Max - lonR.Min
	div := float64(uint64(1) << h.Step)
	return Area{
		Hash: h,
		Lat: Range{
			latR.Min + float64((float64(ilat)/div)*latScale),
			latR.Min + float64((float64(ilat+1)/div)*latScale), // ilat+1 wraps in 32 bits as in C
		},
		Long: Range{
			lonR.Min + float64((float64(ilon)/div)*lonScale),
			lonR.Min + float64((float64(ilon+1)/div)*lonScale),
		},
	}
}

// center is the middle of an area, clamped to the valid coordinates.
func (a Area) center() (lon, lat float64) {
	lon = min(max((a.Long.Min+a.Long.Max)/2, LongMin), LongMax)
	lat = min(max((a.Lat.Min+a.Lat.Max)/2, LatMin), LatMax)
	return lon, lat
}

// ScoreBits converts a sorted set score to hash bits as Redis's C cast
// (double to uint64_t on x86-64) does, so scores that no GEOADD wrote decode
// the same way.
func ScoreBits(score float64) uint64 {
	const two63 = float64(1 << 63)
	switch {
	case score >= two63:
		if score-two63 >= two63 || math.IsInf(score, 1) {
			return 0
		}
		return uint64(int64(score-two63)) ^ 1<<63
	case score < -two63 || math.IsNaN(score):
		return 1 << 63
	}
	return uint64(int64(score))
}

// Decode returns the point a score stands for (the centre of its box).
func Decode(score float64) (lon, lat float64) {
	return decode(longRange, latRange, Hash{ScoreBits(score), StepMax}).center()
}

const alphabet = "0123456789bcdefghjkmnpqrstuvwxyz"

// AppendString appends the 11-character standard geohash of a score: the
// point re-encoded over latitudes -90..90, its 52 bits in base 32 and a final
// '0' (Redis's API promised 11 characters).
func AppendString(dst []byte, score float64) []byte {
	lon, lat := Decode(score)
	h, _ := encode(longRange, standardLat, lon, lat, StepMax)
	for i := 0; i < 11; i++ {
		idx := 0
		if i < 10 {
			idx = int(h.Bits>>(52-(i+1)*5)) & 0x1f
		}
		dst = append(dst, alphabet[idx])
	}
	return dst
}

// LatDistance is the distance in meters between two latitudes on a meridian.
func LatDistance(lat1, lat2 float64) float64 {
	return earthRadius * math.Abs(lat2*degToRad-lat1*degToRad)
}

// Distance is the haversine distance in meters between two points.
func Distance(lon1, lat1, lon2, lat2 float64) float64 {
	lon1r, lon2r := lon1*degToRad, lon2*degToRad
	v := sin((lon2r - lon1r) / 2)
	if v == 0 { // same meridian: no trigonometry needed
		return LatDistance(lat1, lat2)
	}
	lat1r, lat2r := lat1*degToRad, lat2*degToRad
	u := sin((lat2r - lat1r) / 2)
	// The float64 conversions keep the compiler from fusing multiply-adds,
	// which Redis's C does not do: every product is rounded.
	a := float64(u*u) + float64(float64(float64(cos(lat1r)*cos(lat2r))*v)*v)
	return 2.0 * earthRadius * asin(math.Sqrt(a))
}

// Shape is a search area around a centre: a circle of Radius, or a box of
// Width by Height, in units of Unit meters. Its fields are set before the
// first Includes, which prepares the test's constants.
type Shape struct {
	Lon, Lat      float64
	Box           bool
	Radius        float64
	Width, Height float64
	Unit          float64 // meters per unit

	prepared bool
	// limit is the distance Includes compares with: the radius, or half
	// the box's width (its latitude test is exact and cheap).
	limit float64
	// cosLat is the cosine of the centre's latitude by Go's math, for the
	// estimates.
	cosLat float64
	// surelyIn and surelyOut bound the estimated haversine term: below
	// surelyIn a point is within limit, above surelyOut it is not, whatever
	// the last bits; in between the exact distance decides.
	surelyIn, surelyOut float64
	// latCells and lonCells bound the cells (26-bit coordinates of a
	// score) of the points that may be in the shape, with a margin.
	latCells, lonCells [2]uint32
}

// IncludesScore reports whether the point a score stands for lies in the
// shape, and returns it. Points whose cell lies outside the shape's bounding
// rectangle are rejected from the score's bits, without trigonometry.
func (s *Shape) IncludesScore(score float64) (lon, lat float64, ok bool) {
	if !s.prepared {
		s.prepare()
	}
	h := Hash{ScoreBits(score), StepMax}
	if c := uint32(squash(h.Bits)); c < s.latCells[0] || c > s.latCells[1] {
		return 0, 0, false
	}
	if c := uint32(squash(h.Bits >> 1)); c < s.lonCells[0] || c > s.lonCells[1] {
		return 0, 0, false
	}
	lon, lat = decode(longRange, latRange, h).center()
	return lon, lat, s.Includes(lon, lat)
}

// Includes reports whether a point lies in the shape, with Redis's result:
// an estimate with Go's math (a few bits off) decides unless the point is
// within a billionth of the limit, where the exact distance, which costs
// far more, does.
func (s *Shape) Includes(lon, lat float64) bool {
	if !s.prepared {
		s.prepare()
	}
	latR, lonR := lat*degToRad, lon*degToRad
	if !s.Box {
		u := math.Sin((latR - s.Lat*degToRad) / 2)
		if u*u > s.surelyOut { // the latitudes alone are too far apart
			return false
		}
		v := math.Sin((lonR - s.Lon*degToRad) / 2)
		switch a := u*u + s.cosLat*math.Cos(latR)*v*v; {
		case a > s.surelyOut:
			return false
		case a < s.surelyIn:
			return true
		}
		return Distance(s.Lon, s.Lat, lon, lat) <= s.limit
	}
	// As in Redis: the latitude test is cheaper, so it goes first, then the
	// distance along the point's latitude.
	if LatDistance(lat, s.Lat) > s.Height*s.Unit/2 {
		return false
	}
	c, v := math.Cos(latR), math.Sin((s.Lon*degToRad-lonR)/2)
	switch a := c * c * v * v; {
	case a > s.surelyOut:
		return false
	case a < s.surelyIn:
		return true
	}
	return Distance(lon, lat, s.Lon, lat) <= s.limit
}

// DistanceTo is the distance in meters from the centre to a point.
func (s *Shape) DistanceTo(lon, lat float64) float64 {
	return Distance(s.Lon, s.Lat, lon, lat)
}

// estimateMargin bounds how far an estimate may be from the exact distance:
// relative for the rounding of Go's functions, absolute near zero.
const estimateMargin, estimateFloor = 1e-9, 1e-6

func (s *Shape) prepare() {
	s.limit = s.Radius * s.Unit
	if s.Box {
		s.limit = s.Width * s.Unit / 2
	}
	s.cosLat = math.Cos(s.Lat * degToRad)
	// The haversine term of a distance d is sin²(d/2R), increasing up to
	// d/2R = π/2 but flat near it, where the margin would not cover the
	// estimate's error: from 1.5 on, every point is left to the exact
	// distance.
	term := func(d, beyond float64) float64 {
		if x := d / (2 * earthRadius); x < 1.5 {
			sn := math.Sin(x)
			return sn * sn
		}
		return beyond
	}
	s.surelyIn = -1
	if in := s.limit*(1-estimateMargin) - estimateFloor; in > 0 {
		s.surelyIn = term(in, -1)
	}
	s.surelyOut = term(s.limit*(1+estimateMargin)+estimateFloor, math.Inf(1))
	s.boundCells()
	s.prepared = true
}

// boundCells sets the cells of the rectangle that holds every point of the
// shape: the latitudes within the radius (or half the height), and the
// longitudes where a circle of that angular radius is widest, asin(sin ρ /
// cos φ), or where a box's half width spans the most degrees, at the
// latitude farthest from the equator. Around a pole or across ±180 degrees
// the longitudes are not bounded.
func (s *Shape) boundCells() {
	const margin = 1e-6
	s.latCells, s.lonCells = [2]uint32{0, math.MaxUint32}, [2]uint32{0, math.MaxUint32}
	half := s.limit
	if s.Box {
		half = s.Height * s.Unit / 2
	}
	dLat := half / earthRadius * (1 + margin) // radians
	if !(dLat < math.Pi/2) {
		return
	}
	s.latCells = cells(latRange, s.Lat-dLat/degToRad, s.Lat+dLat/degToRad)
	farthest := (math.Abs(s.Lat*degToRad) + dLat) * (1 + margin)
	// The angle whose sine bounds that of the largest longitude difference
	// (half of it for a box), and the latitude where it is largest.
	angle, at := s.limit/earthRadius, math.Abs(s.Lat*degToRad)*(1+margin)
	if s.Box {
		angle, at = s.limit/(2*earthRadius), farthest
	}
	if !(farthest < math.Pi/2 && angle < 0.5) { // a pole, or too wide to care
		return
	}
	sinDLon := math.Sin(angle) / math.Cos(at) * (1 + margin)
	if !(sinDLon < 0.5) {
		return
	}
	dLon := math.Asin(sinDLon) * (1 + margin)
	if s.Box {
		dLon *= 2
	}
	if from, to := s.Lon-dLon/degToRad, s.Lon+dLon/degToRad; from > LongMin && to < LongMax {
		s.lonCells = cells(longRange, from, to)
	}
}

// cells returns the cells of r, widened by one on each side, whose points
// may lie between from and to. Cells past the last one (the maximum
// coordinate's, or scores no GEOADD wrote) decode to the maximum: they are
// in when the last one is.
func cells(r Range, from, to float64) [2]uint32 {
	const last = 1<<StepMax - 1
	lo := math.Floor((from-r.Min)/(r.Max-r.Min)*(last+1)) - 1
	hi := math.Floor((to-r.Min)/(r.Max-r.Min)*(last+1)) + 1
	c := [2]uint32{uint32(min(max(lo, 0), last)), uint32(min(max(hi, 0), last))}
	if c[1] == last {
		c[1] = math.MaxUint32
	}
	return c
}

// boundingBox returns the longitude and latitude limits around the shape.
func (s *Shape) boundingBox() (minLon, minLat, maxLon, maxLat float64) {
	height, width := s.Unit*s.Radius, s.Unit*s.Radius
	if s.Box {
		height, width = s.Unit*(s.Height/2), s.Unit*(s.Width/2)
	}
	latDelta := (height / earthRadius) / degToRad
	lonDeltaTop := (width / earthRadius / cos((s.Lat+latDelta)*degToRad)) / degToRad
	lonDeltaBottom := (width / earthRadius / cos((s.Lat-latDelta)*degToRad)) / degToRad
	// The hemispheres widen in opposite directions.
	if s.Lat < 0 {
		return s.Lon - lonDeltaBottom, s.Lat - latDelta, s.Lon + lonDeltaBottom, s.Lat + latDelta
	}
	return s.Lon - lonDeltaTop, s.Lat - latDelta, s.Lon + lonDeltaTop, s.Lat + latDelta
}

// stepsForRadius picks the precision whose boxes are about the radius.
func stepsForRadius(meters, lat float64) uint8 {
	if meters == 0 {
		return StepMax
	}
	step := 1
	for meters < mercatorMax {
		meters *= 2
		step++
	}
	step -= 2 // make sure the range is included in most cases
	// Boxes get narrower towards the poles.
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	return uint8(min(max(step, 1), StepMax))
}

func moveX(h Hash, d int) Hash { return move(h, d, 0xaaaaaaaaaaaaaaaa) }

func moveY(h Hash, d int) Hash { return move(h, d, 0x5555555555555555) }

// move steps h by one cell (d > 0 up, d < 0 down) along the coordinate
// whose interleaved bits are own, leaving the other coordinate's bits.
func move(h Hash, d int, own uint64) Hash {
	if d == 0 {
		return h
	}
	shift := 64 - uint(h.Step)*2
	c, other := h.Bits&own, h.Bits&^own
	zz := ^own >> shift // the other coordinate's bits fill the gaps, so +1 carries across them
	if d > 0 {
		c += zz + 1
	} else {
		c |= zz
		c -= zz + 1
	}
	c &= own >> shift
	h.Bits = c | other
	return h
}

// AppendBoxes appends the boxes to search for the shape to dst, in Redis's
// order: the centre's, then north, south, east, west, north-east, north-west,
// south-east, south-west. A box of no use is left out (zero); a box equal to
// the one searched before it is dropped too, as Redis skips it.
func (s *Shape) AppendBoxes(dst []Hash) []Hash {
	minLon, minLat, maxLon, maxLat := s.boundingBox()
	meters := s.Radius
	if s.Box {
		meters = math.Sqrt(float64((s.Width/2)*(s.Width/2)) + float64((s.Height/2)*(s.Height/2)))
	}
	meters *= s.Unit
	steps := stepsForRadius(meters, s.Lat)
	hash, nb, area := s.around(steps)
	// A neighbour too close to the search area means the step is too coarse.
	north := decode(longRange, latRange, nb[0])
	south := decode(longRange, latRange, nb[1])
	east := decode(longRange, latRange, nb[2])
	west := decode(longRange, latRange, nb[3])
	if steps > 1 && (north.Lat.Max < maxLat || south.Lat.Min > minLat || east.Long.Max < maxLon || west.Long.Min > minLon) {
		steps--
		hash, nb, area = s.around(steps)
	}
	// nb: north, south, east, west, north-east, north-west, south-east, south-west.
	if steps >= 2 {
		if area.Lat.Min < minLat {
			nb[1], nb[7], nb[6] = Hash{}, Hash{}, Hash{}
		}
		if area.Lat.Max > maxLat {
			nb[0], nb[4], nb[5] = Hash{}, Hash{}, Hash{}
		}
		if area.Long.Min < minLon {
			nb[3], nb[7], nb[5] = Hash{}, Hash{}, Hash{}
		}
		if area.Long.Max > maxLon {
			nb[2], nb[6], nb[4] = Hash{}, Hash{}, Hash{}
		}
	}
	all := [9]Hash{hash, nb[0], nb[1], nb[2], nb[3], nb[4], nb[5], nb[6], nb[7]}
	last := 0
	for i, h := range all {
		if h.isZero() {
			continue
		}
		// Huge radii make neighbours coincide. Redis compares with the box
		// searched last, but never with the centre's (index 0).
		if last != 0 && h == all[last] {
			continue
		}
		dst = append(dst, h)
		last = i
	}
	return dst
}

// around returns the centre's hash at steps, its eight neighbours (north,
// south, east, west, north-east, north-west, south-east, south-west) and its
// area.
func (s *Shape) around(steps uint8) (Hash, [8]Hash, Area) {
	h, _ := encode(longRange, latRange, s.Lon, s.Lat, steps)
	nb := [8]Hash{
		moveY(h, 1), moveY(h, -1), moveX(h, 1), moveX(h, -1),
		moveY(moveX(h, 1), 1), moveY(moveX(h, -1), 1), moveY(moveX(h, 1), -1), moveY(moveX(h, -1), -1),
	}
	return h, nb, decode(longRange, latRange, h)
}

// ScoreRange returns the scores of the points in a box: min <= score < max.
func ScoreRange(h Hash) (lo, hi uint64) {
	shift := 52 - uint(h.Step)*2
	return h.Bits << shift, (h.Bits + 1) << shift
}
