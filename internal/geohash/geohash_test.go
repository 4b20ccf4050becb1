package geohash

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// Golden values from redis-server 7.0: GEOADD scores, GEOPOS coordinates
// (printed with 17 decimals), GEOHASH strings and GEODIST meters.
func TestMatchesRedis(t *testing.T) {
	points := []struct {
		lon, lat float64
		score    uint64
		pos      [2]string
		hash     string
	}{
		{13.361389, 38.115556, 3479099956230698, [2]string{"13.36138933897018433", "38.11555639549629859"}, "sqc8b49rny0"},
		{15.087269, 37.502669, 3479447370796909, [2]string{"15.08726745843887329", "37.50266842333162032"}, "sqdtr74hyu0"},
		{-180, -85.05112878, 0, [2]string{"-179.99999731779098511", "-85.05112751263942528"}, "00bh0hbj200"},
		{180, 85.05112878, 13510798882111488, [2]string{"180.00000000000000000", "85.05112877999999910"}, "bp05b5048p0"},
		{0, 0, 3377699720527872, [2]string{"0.00000268220901489", "0.00000126736058093"}, "s0000000000"},
	}
	for _, p := range points {
		if got := Encode(p.lon, p.lat); got != p.score {
			t.Errorf("Encode(%v, %v) = %d, want %d", p.lon, p.lat, got, p.score)
		}
		lon, lat := Decode(float64(p.score))
		if got := [2]string{strconv.FormatFloat(lon, 'f', 17, 64), strconv.FormatFloat(lat, 'f', 17, 64)}; got != p.pos {
			t.Errorf("Decode(%d) = %v, want %v", p.score, got, p.pos)
		}
		if got := string(AppendString(nil, float64(p.score))); got != p.hash {
			t.Errorf("hash of %d = %s, want %s", p.score, got, p.hash)
		}
	}
	// Scores no GEOADD writes decode as C's cast makes them.
	for _, c := range []struct {
		score float64
		hash  string
	}{{-1, "bp05b5048p0"}, {1e300, "00bh0hbj200"}, {-1e300, "00bh0hbj200"}, {9.3e18, "bp05b5048p0"}} {
		if got := string(AppendString(nil, c.score)); got != c.hash {
			t.Errorf("hash of score %v = %s, want %s", c.score, got, c.hash)
		}
	}
	p1, p2 := points[0], points[1]
	lon1, lat1 := Decode(float64(p1.score))
	lon2, lat2 := Decode(float64(p2.score))
	if got := strconv.FormatFloat(Distance(lon1, lat1, lon2, lat2), 'f', 4, 64); got != "166274.1516" {
		t.Errorf("distance %s", got)
	}
	lon1, lat1 = Decode(0)
	lon2, lat2 = Decode(13510798882111488)
	if got := strconv.FormatFloat(Distance(lon1, lat1, lon2, lat2)/1609.34, 'f', 4, 64); got != "11756.2756" {
		t.Errorf("distance %s mi", got)
	}
}

// TestTrigMatchesGlibc checks the double-double sin, cos and asin against
// glibc's results (which Redis uses) on random arguments.
func TestTrigMatchesGlibc(t *testing.T) {
	for _, c := range []struct {
		f       func(float64) float64
		x, want float64
	}{
		{sin, -0.3047708575371608, -0.3000746004876542},
		{sin, 0.3825432709151739, 0.3732811130261955},
		{sin, 2.714947737751868, 0.41381880529046366},
		{sin, -0.2198395513614506, -0.2180730388554061},
		{sin, 0.050184147598534956, 0.05016308588422151},
		{sin, 0.5592629046393407, 0.5305615458665447},
		{cos, -2.01817379932879, -0.4326025937908381},
		{cos, 0.07621528986755521, 0.9970970204319134},
		{cos, 0.8312494093875324, 0.6739532551802201},
		{cos, 1.8750519841276967, -0.2995831031019345},
		{cos, -2.597609880133002, -0.8556541969103503},
		{cos, -1.258231919203037, 0.30749980214268374},
		{asin, 0.0906705374918394, 0.09079523532655258},
		{asin, 0.8096445343671775, 0.9435462166689695},
		{asin, 0.6934384825412391, 0.7662504126352989},
		{asin, 0.041880336369846005, 0.04189258880004817},
		{asin, 0.9821934207987782, 1.381800679803919},
		{asin, 0.9647577811255668, 1.3045213226518246},
		{asin, 1, 1.5707963267948966},
	} {
		if got := c.f(c.x); got != c.want {
			t.Errorf("f(%v) = %v, want %v", c.x, got, c.want)
		}
	}
}

// FuzzDecode decodes arbitrary scores (a geo set is a sorted set any ZADD can
// write to) and checks that nothing panics, the point is storable, and a
// stored point's score survives decoding and encoding.
func FuzzDecode(f *testing.F) {
	for _, s := range []float64{0, -1, 1e300, 3479099956230698, 13510798882111488, 0.5, -0.0} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, score float64) {
		lon, lat := Decode(score)
		if !ValidLonLat(lon, lat) {
			t.Fatalf("score %v decodes to %v,%v", score, lon, lat)
		}
		AppendString(nil, score)
		if score >= 0 && score < 1<<52 && score == float64(uint64(score)) {
			if got := Encode(lon, lat); got != uint64(score) {
				t.Fatalf("score %v: decoded %v,%v encodes to %d", score, lon, lat, got)
			}
		}
		s := Shape{Lon: lon, Lat: lat, Radius: math.Abs(score), Unit: 1}
		s.AppendBoxes(nil)
		s.IncludesScore(score)
		s.IncludesScore(0)
		s.DistanceTo(0, 0)
	})
}

// TestIncludesMatchesExactDistance checks Includes, which decides most
// points with an estimate, against the exact distances Redis compares, on
// random points and on points exactly at, or one bit around, the limit.
func TestIncludesMatchesExactDistance(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	coord := func(r float64) float64 { return (rng.Float64()*2 - 1) * r }
	for i := 0; i < 20000; i++ {
		clon, clat := coord(180), coord(LatMax)
		lon, lat := clon+coord(rng.Float64()), clat+coord(rng.Float64())
		lon, lat = max(min(lon, LongMax), LongMin), max(min(lat, LatMax), LatMin)
		box := i%2 == 1
		var limit float64 // what the point's distance is compared with
		if box {
			limit = Distance(lon, lat, clon, lat)
		} else {
			limit = Distance(clon, clat, lon, lat)
		}
		switch i % 8 / 2 {
		case 1:
			limit = math.Nextafter(limit, 0)
		case 2:
			limit = math.Nextafter(limit, math.Inf(1))
		case 3:
			limit *= 2 * rng.Float64()
		}
		s := Shape{Lon: clon, Lat: clat, Box: box, Radius: limit, Width: 2 * limit, Height: 1e7, Unit: 1}
		if box {
			s.Width = limit / 0.5 // so Width*Unit/2 is limit exactly
		}
		want := s.DistanceTo(lon, lat) <= limit
		if box {
			want = LatDistance(lat, clat) <= s.Height/2 && Distance(lon, lat, clon, lat) <= limit
		}
		if got := s.Includes(lon, lat); got != want {
			t.Fatalf("%+v: Includes(%v, %v) = %v, want %v", s, lon, lat, got, want)
		}
	}
}

// TestIncludesScoreMatchesExactDistance checks IncludesScore, which rejects
// points from their cells, against the exact test of the decoded point, for
// shapes from meters to continents, near the poles and across ±180 degrees,
// and for scores no GEOADD writes.
func TestIncludesScoreMatchesExactDistance(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 8))
	coord := func(r float64) float64 { return (rng.Float64()*2 - 1) * r }
	clamp := func(lon, lat float64) (float64, float64) {
		return max(min(lon, LongMax), LongMin), max(min(lat, LatMax), LatMin)
	}
	exact := func(s *Shape, lon, lat float64) bool {
		if !s.Box {
			return s.DistanceTo(lon, lat) <= s.Radius*s.Unit
		}
		return LatDistance(lat, s.Lat) <= s.Height*s.Unit/2 && Distance(lon, lat, s.Lon, lat) <= s.Width*s.Unit/2
	}
	in := 0
	for i := 0; i < 3000; i++ {
		clon, clat := clamp(coord(180), coord(LatMax))
		if i%10 == 0 {
			clon = LongMax * math.Copysign(1, coord(1)) // at ±180
		}
		size := math.Pow(10, rng.Float64()*7.5) // 1 m to 30000 km
		s := Shape{Lon: clon, Lat: clat, Box: i%2 == 1, Radius: size, Width: size * 2 * rng.Float64(), Height: size * 2 * rng.Float64(), Unit: 1}
		spread := min(size/111000*3, 180) // degrees around the centre
		for j := 0; j < 50; j++ {
			score := float64(Encode(clamp(clon+coord(spread), clat+coord(spread))))
			switch j % 4 {
			case 0:
				score = rng.Float64() * (1 << 60) // cells past the last ones
			case 1:
				score = float64(Encode(clamp(edgePoint(&s, rng))))
			}
			lon, lat := Decode(score)
			glon, glat, got := s.IncludesScore(score)
			if want := exact(&s, lon, lat); got != want || (got && (glon != lon || glat != lat)) {
				t.Fatalf("%+v: IncludesScore(%v) = %v %v %v, want %v %v %v", s, score, glon, glat, got, lon, lat, want)
			}
			if got {
				in++
			}
		}
	}
	if in < 10000 {
		t.Fatalf("only %d points in their shapes", in)
	}
}

// edgePoint returns a point within a millionth of the shape's edge: on the
// circle, or on the box's latitude limits or longitude limits.
func edgePoint(s *Shape, rng *rand.Rand) (lon, lat float64) {
	jitter := 1 + (rng.Float64()*2-1)*1e-6
	sign := math.Copysign(1, rng.Float64()-0.5)
	if !s.Box { // the destination at the radius on a random bearing
		d, b, lat1 := s.Radius*s.Unit/earthRadius*jitter, rng.Float64()*2*math.Pi, s.Lat*degToRad
		lat2 := math.Asin(math.Sin(lat1)*math.Cos(d) + math.Cos(lat1)*math.Sin(d)*math.Cos(b))
		lon2 := s.Lon*degToRad + math.Atan2(math.Sin(b)*math.Sin(d)*math.Cos(lat1), math.Cos(d)-math.Sin(lat1)*math.Sin(lat2))
		return math.Remainder(lon2/degToRad, 360), lat2 / degToRad
	}
	dLat := s.Height * s.Unit / 2 / earthRadius / degToRad
	if rng.IntN(2) == 0 {
		return s.Lon + (rng.Float64()*2-1)*s.Width*s.Unit/2/earthRadius/degToRad, s.Lat + sign*dLat*jitter
	}
	lat = s.Lat + (rng.Float64()*2-1)*dLat
	dLon := 2 * math.Asin(min(1, math.Sin(s.Width*s.Unit/4/earthRadius)/math.Cos(lat*degToRad)))
	return s.Lon + sign*dLon/degToRad*jitter, lat
}
