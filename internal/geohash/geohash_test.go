package geohash

import (
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
