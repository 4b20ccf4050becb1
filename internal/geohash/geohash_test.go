package geohash

import (
	"math"
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
		s.Contains(0, 0)
	})
}
