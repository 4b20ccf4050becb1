package server_test

// Differential tests of the geo commands (GEOADD GEODIST GEOHASH GEOPOS
// GEOSEARCH GEOSEARCHSTORE GEORADIUS GEORADIUSBYMEMBER and the _RO forms)
// against redis-server.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/difftest"
	"github.com/keyhive/keyhive/internal/geohash"
)

func TestGeoCommandInfo(t *testing.T) {
	p := difftest.Start(t)
	for _, c := range []string{"geoadd", "geodist", "geohash", "geopos", "geosearch", "geosearchstore", "georadius", "georadius_ro", "georadiusbymember", "georadiusbymember_ro"} {
		r := p.Redis().Do("COMMAND", "INFO", c)
		k := p.Keyhive().Do("COMMAND", "INFO", c)
		if len(r.Elems) != 1 || len(k.Elems) != 1 || len(k.Elems[0].Elems) < 7 {
			t.Fatalf("COMMAND INFO %s: redis %s, keyhive %s", c, r, k)
		}
		for i := 0; i < 7; i++ {
			if string(r.Elems[0].Elems[i].Raw) != string(k.Elems[0].Elems[i].Raw) {
				t.Errorf("COMMAND INFO %s field %d: redis %q, keyhive %q", c, i, r.Elems[0].Elems[i].Raw, k.Elems[0].Elems[i].Raw)
			}
		}
		bmDocsHead(t, p, c)
	}
	// The STORE keys of GEORADIUS are found like Redis finds them.
	p.Do("COMMAND", "GETKEYS", "GEORADIUS", "src", "1", "2", "3", "km", "STORE", "dst")
	p.Do("COMMAND", "GETKEYS", "GEORADIUSBYMEMBER", "src", "m", "3", "km", "STOREDIST", "dst")
	p.Do("COMMAND", "GETKEYS", "GEOSEARCHSTORE", "dst", "src", "FROMMEMBER", "m", "BYRADIUS", "1", "m")
	p.Do("COMMAND", "GETKEYS", "GEORADIUS", "src", "1", "2", "3", "km", "STOREDIST", "b", "STORE", "a")
	p.Do("COMMAND", "GETKEYS", "GEORADIUS", "src", "1", "2", "3", "store", "km")
	p.Do("COMMAND", "GETKEYS", "GEORADIUSBYMEMBER", "src", "m", "3", "STORE", "x")
	p.Do("COMMAND", "GETKEYS", "GEORADIUS", "src", "1", "2", "3", "km", "STORE")
	p.Do("COMMAND", "GETKEYS", "GEORADIUS_RO", "src", "1", "2", "3", "km", "STORE", "x")
}

// geoSicily loads the example set of Redis's documentation and a few more.
func geoSicily(p *difftest.Pair) {
	p.Do("GEOADD", "Sicily", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania")
	p.Do("GEOADD", "Sicily", "12.758489", "38.788135", "edge1", "17.241510", "38.788135", "edge2", "13.5", "37.8", "a", "14", "38", "b")
}

func TestGeoAdd(t *testing.T) {
	p := difftest.Start(t)
	geoSicily(p)
	p.Do("ZRANGE", "Sicily", 0, -1, "WITHSCORES")
	p.Do("OBJECT", "ENCODING", "Sicily")
	p.Do("GEOADD", "Sicily", "13.361389", "38.115556", "Palermo")
	p.Do("GEOADD", "Sicily", "CH", "13.361389", "38.115556", "Palermo", "13.4", "38.1", "Catania")
	p.Do("GEOADD", "Sicily", "NX", "1", "1", "Palermo", "2", "2", "n1")
	p.Do("GEOADD", "Sicily", "XX", "1", "1", "Palermo", "2", "2", "n2")
	p.Do("GEOADD", "Sicily", "xx", "ch", "nx", "1", "1", "x")
	p.Do("GEOADD", "Sicily", "CH", "XX", "CH", "3", "3", "Palermo")
	p.Do("ZRANGE", "Sicily", 0, -1, "WITHSCORES")
	// Errors: option and argument shapes, coordinates, wrong type.
	p.Do("GEOADD", "Sicily", "NX", "XX", "1", "1", "x")
	p.Do("GEOADD", "Sicily", "1", "1")
	p.Do("GEOADD", "Sicily", "1", "1", "m", "2")
	p.Do("GEOADD", "Sicily", "CH", "CH", "CH")
	p.Do("GEOADD", "Sicily", "GT", "1", "1", "m")
	p.Do("GEOADD", "Sicily", "x", "1", "m")
	p.Do("GEOADD", "Sicily", "1", "y", "m")
	p.Do("GEOADD", "Sicily", " 1", "1", "m")
	p.Do("GEOADD", "Sicily", "nan", "1", "m")
	for _, c := range [][2]string{
		{"180.0000001", "0"}, {"-180.0000001", "0"}, {"0", "85.05112879"}, {"0", "-85.05112879"},
		{"inf", "0"}, {"0", "-inf"}, {"1e300", "0"}, {"-0", "90"}, {"200", "100"},
	} {
		p.Do("GEOADD", "Sicily", c[0], c[1], "bad")
	}
	// An error in a later element adds nothing.
	p.Do("GEOADD", "Sicily", "1", "1", "first", "500", "1", "second")
	p.Do("ZSCORE", "Sicily", "first")
	// The limits themselves are valid, and scores are exact.
	p.Do("GEOADD", "limits", "180", "85.05112878", "ne", "-180", "-85.05112878", "sw", "180", "-85.05112878", "se", "-180", "85.05112878", "nw", "0", "0", "zero", "-0.0", "-0.0", "negzero", "1e-300", "1e-300", "tiny")
	p.Do("ZRANGE", "limits", 0, -1, "WITHSCORES")
	p.Do("GEOPOS", "limits", "ne", "sw", "se", "nw", "zero", "negzero", "tiny")
	bmNonString(t, p, "list")
	p.Do("GEOADD", "list", "1", "1", "m")
	p.Do("SET", "str", "x")
	p.Do("GEOADD", "str", "1", "1", "m")
	// A large geo set converts like a sorted set.
	args := []any{"GEOADD", "big"}
	for i := 0; i < 200; i++ {
		args = append(args, strconv.FormatFloat(float64(i)*0.01, 'f', 2, 64), "45", "m"+strconv.Itoa(i))
	}
	p.Do(args...)
	p.Do("OBJECT", "ENCODING", "big")
	p.Do("ZCARD", "big")
	p.Do("GEOADD")
	p.Do("GEOADD", "k", "1", "2")
}

func TestGeoPosHashDist(t *testing.T) {
	p := difftest.Start(t)
	geoSicily(p)
	p.Do("GEOPOS", "Sicily", "Palermo", "Catania", "nope", "edge1", "edge2", "a", "b")
	p.Do("GEOPOS", "Sicily")
	p.Do("GEOPOS", "nokey", "a", "b")
	p.Do("GEOHASH", "Sicily", "Palermo", "Catania", "nope", "edge1", "edge2", "a", "b")
	p.Do("GEOHASH", "Sicily")
	p.Do("GEOHASH", "nokey", "a")
	for _, u := range []string{"m", "km", "ft", "mi", "M", "KM", "Ft", "mI"} {
		p.Do("GEODIST", "Sicily", "Palermo", "Catania", u)
		p.Do("GEODIST", "Sicily", "edge1", "edge2", u)
	}
	p.Do("GEODIST", "Sicily", "Palermo", "Palermo")
	p.Do("GEODIST", "Sicily", "Palermo", "Catania")
	p.Do("GEODIST", "Sicily", "Palermo", "nope")
	p.Do("GEODIST", "Sicily", "nope", "Palermo", "km")
	p.Do("GEODIST", "nokey", "a", "b")
	p.Do("GEODIST", "nokey", "a", "b", "parsecs")
	p.Do("GEODIST", "Sicily", "Palermo", "Catania", "parsecs")
	p.Do("GEODIST", "Sicily", "Palermo", "Catania", "km", "extra")
	p.Do("GEODIST", "Sicily", "Palermo")
	// Scores that GEOADD never writes still decode, as C's casts make them.
	for i, s := range []string{"-1", "1e300", "-1e300", "9.3e18", "inf", "-inf", "0.5", "4503599627370496", "13510798882111487", "18014398509481984"} {
		p.Do("ZADD", "odd", s, "m"+strconv.Itoa(i))
	}
	p.Do("GEOPOS", "odd", "m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9")
	p.Do("GEOHASH", "odd", "m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9")
	p.Do("GEODIST", "odd", "m0", "m1")
	p.Do("GEODIST", "odd", "m4", "m5")
	// Points on the same meridian, near the poles, across the antimeridian.
	p.Do("GEOADD", "w", "10", "80", "n1", "10", "-80", "s1", "179.9999", "0", "e", "-179.9999", "0", "wst", "0", "85", "top", "180", "85", "top2")
	p.Do("GEODIST", "w", "n1", "s1", "km")
	p.Do("GEODIST", "w", "e", "wst")
	p.Do("GEODIST", "w", "top", "top2")
	p.Do("GEOPOS", "w", "n1", "s1", "e", "wst", "top", "top2")
	bmNonString(t, p, "list")
	p.Do("GEOPOS", "list", "a")
	p.Do("GEOHASH", "list", "a")
	p.Do("GEODIST", "list", "a", "b")
	p.Proto(3)
	p.Do("GEOPOS", "Sicily", "Palermo", "nope")
	p.Do("GEOHASH", "Sicily", "Palermo", "nope")
	p.Do("GEODIST", "Sicily", "Palermo", "Catania")
	p.Do("GEODIST", "Sicily", "Palermo", "nope")
}

func TestGeoSearchOptions(t *testing.T) {
	p := difftest.Start(t)
	geoSicily(p)
	for _, cmd := range [][]any{
		{"GEORADIUS", "Sicily", 15, 37, 200, "km"},
		{"GEORADIUS", "Sicily", 15, 37, 200, "km", "WITHDIST", "WITHCOORD", "WITHHASH"},
		{"GEORADIUS", "Sicily", 15, 37, 200, "km", "withhash", "ASC"},
		{"GEORADIUS", "Sicily", 15, 37, 200, "km", "DESC", "WITHDIST"},
		{"GEORADIUS", "Sicily", 15, 37, 200, "km", "COUNT", 2},
		{"GEORADIUS", "Sicily", 15, 37, 200, "km", "COUNT", 2, "DESC"},
		{"GEORADIUS", "Sicily", 15, 37, 200, "km", "COUNT", 1, "ANY"},
		{"GEORADIUS", "Sicily", 15, 37, 200, "km", "COUNT", 100, "ANY", "ASC"},
		{"GEORADIUS", "Sicily", 15, 37, 200, "km", "COUNT", "9223372036854775807"},
		{"GEORADIUS", "Sicily", 15, 37, 200, "km", "ASC", "DESC"},
		{"GEORADIUS", "Sicily", 15, 37, 1, "m"},
		{"GEORADIUS", "Sicily", 15, 37, 0, "km"},
		{"GEORADIUS", "Sicily", 15, 37, "1e9", "km"},
		{"GEORADIUS", "Sicily", 15, 37, "inf", "km"},
		{"GEORADIUS", "Sicily", 15, 37, 200, "mi"},
		{"GEORADIUS", "Sicily", 15, 37, 200000, "ft", "WITHDIST"},
		{"GEORADIUS_RO", "Sicily", 15, 37, 200, "km", "WITHDIST"},
		{"GEORADIUSBYMEMBER", "Sicily", "Palermo", 200, "km", "WITHDIST", "WITHCOORD"},
		{"GEORADIUSBYMEMBER", "Sicily", "Palermo", 0, "km", "WITHDIST"},
		{"GEORADIUSBYMEMBER_RO", "Sicily", "Catania", 100, "km", "ASC", "COUNT", 3},
		{"GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYRADIUS", 200, "km", "ASC", "WITHDIST"},
		{"GEOSEARCH", "Sicily", "FROMMEMBER", "Palermo", "BYRADIUS", 200, "km", "DESC", "WITHHASH"},
		{"GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYBOX", 400, 400, "km", "ASC", "WITHCOORD", "WITHDIST"},
		{"GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYBOX", 4000, 10, "km"},
		{"GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYBOX", 10, 4000, "km"},
		{"GEOSEARCH", "Sicily", "FROMMEMBER", "a", "BYBOX", 0, 0, "m", "WITHDIST"},
		{"GEOSEARCH", "Sicily", "FROMMEMBER", "a", "FROMMEMBER", "b", "BYRADIUS", 50, "km"},
		{"GEOSEARCH", "Sicily", "BYRADIUS", 50, "km", "FROMMEMBER", "b", "COUNT", 2},
		{"GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYRADIUS", 200, "km", "COUNT", 2, "ANY"},
		{"GEOSEARCH", "nokey", "FROMMEMBER", "x", "BYRADIUS", 1, "m"},
		{"GEOSEARCH", "nokey", "FROMLONLAT", 1, 1, "BYBOX", 1, 1, "m"},
		{"GEORADIUS", "nokey", 1, 1, 1, "m"},
		{"GEORADIUSBYMEMBER", "nokey", "x", "bad", "bad"},
		{"GEORADIUSBYMEMBER", "nokey", "x", 1, "m", "BAD"},
	} {
		p.Do(cmd...)
	}
	p.Proto(3)
	p.Do("GEORADIUS", "Sicily", 15, 37, 200, "km", "WITHDIST", "WITHCOORD", "WITHHASH")
	p.Do("GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYBOX", 400, 400, "km", "ASC", "WITHCOORD")
	p.Do("GEOSEARCH", "Sicily", "FROMLONLAT", 15, 37, "BYBOX", 1, 1, "km")
}

func TestGeoSearchErrors(t *testing.T) {
	p := difftest.Start(t)
	geoSicily(p)
	bmNonString(t, p, "list")
	for _, cmd := range [][]any{
		{"GEORADIUS", "Sicily", "x", 37, 200, "km"},
		{"GEORADIUS", "Sicily", 15, 100, 200, "km"},
		{"GEORADIUS", "Sicily", 15, 37, "x", "km"},
		{"GEORADIUS", "Sicily", 15, 37, -1, "km"},
		{"GEORADIUS", "Sicily", 15, 37, 1, "parsecs"},
		{"GEORADIUS", "Sicily", 15, 37, 1, "km", "COUNT"},
		{"GEORADIUS", "Sicily", 15, 37, 1, "km", "COUNT", 0},
		{"GEORADIUS", "Sicily", 15, 37, 1, "km", "COUNT", -5},
		{"GEORADIUS", "Sicily", 15, 37, 1, "km", "COUNT", "x"},
		{"GEORADIUS", "Sicily", 15, 37, 1, "km", "ANY"},
		{"GEORADIUS", "Sicily", 15, 37, 1, "km", "STORE"},
		{"GEORADIUS", "Sicily", 15, 37, 1, "km", "STORE", "d", "WITHDIST"},
		{"GEORADIUS", "Sicily", 15, 37, 1, "km", "WITHHASH", "STOREDIST", "d"},
		{"GEORADIUS", "Sicily", 15, 37, 1, "km", "FROMMEMBER", "a"},
		{"GEORADIUS", "Sicily", 15, 37, 1, "km", "BYRADIUS", 1, "km"},
		{"GEORADIUS", "Sicily", 15, 37, 1, "km", "junk"},
		{"GEORADIUS_RO", "Sicily", 15, 37, 1, "km", "STORE", "d"},
		{"GEORADIUSBYMEMBER_RO", "Sicily", "a", 1, "km", "STOREDIST", "d"},
		{"GEORADIUSBYMEMBER", "Sicily", "nope", 1, "km"},
		{"GEORADIUSBYMEMBER", "Sicily", "a", "x", "km"},
		{"GEORADIUSBYMEMBER", "Sicily", "a", 1, "yd"},
		{"GEOSEARCH", "Sicily", "FROMMEMBER", "nope", "BYRADIUS", 1, "km"},
		{"GEOSEARCH", "Sicily", "FROMMEMBER", "a", "FROMLONLAT", 1, 1, "BYRADIUS", 1, "km"},
		{"GEOSEARCH", "Sicily", "FROMLONLAT", 1, 1, "FROMMEMBER", "a", "BYRADIUS", 1, "km"},
		{"GEOSEARCH", "Sicily", "FROMLONLAT", 1, 1, "BYRADIUS", 1, "km", "BYBOX", 1, 1, "km"},
		{"GEOSEARCH", "Sicily", "FROMLONLAT", 1, 1, "BYBOX", 1, 1, "km", "BYRADIUS", 1, "km"},
		{"GEOSEARCH", "Sicily", "FROMLONLAT", 1, 1, "BYRADIUS", 1},
		{"GEOSEARCH", "Sicily", "FROMLONLAT", 1, "BYRADIUS", 1, "km"},
		{"GEOSEARCH", "Sicily", "FROMLONLAT", 1, 1, "BYBOX", 1, 1},
		{"GEOSEARCH", "Sicily", "FROMLONLAT", 1, 1, "BYBOX", "x", 1, "km"},
		{"GEOSEARCH", "Sicily", "FROMLONLAT", 1, 1, "BYBOX", 1, "y", "km"},
		{"GEOSEARCH", "Sicily", "FROMLONLAT", 1, 1, "BYBOX", -1, 1, "km"},
		{"GEOSEARCH", "Sicily", "FROMLONLAT", 1, 1, "BYBOX", 1, -1, "parsecs"},
		{"GEOSEARCH", "Sicily", "FROMLONLAT", 1, 1, "BYBOX", 1, 1, "parsecs"},
		{"GEOSEARCH", "Sicily", "FROMLONLAT", 1, 1, "BYRADIUS", 1, "km", "STORE", "d"},
		{"GEOSEARCH", "Sicily", "FROMLONLAT", 1, 1, "BYRADIUS", 1, "km", "STOREDIST"},
		{"GEOSEARCH", "Sicily", "FROMLONLAT", 1, 1, "BYRADIUS", 1, "km", "ANY"},
		{"geosearch", "Sicily", "BYRADIUS", 1, "km"},
		{"GeoSearch", "Sicily", "FROMLONLAT", 1, 1, "WITHDIST"},
		{"GEOSEARCH", "Sicily", "FROMLONLAT", 1, 1, "BYRADIUS", 1, "km", "COUNT", 1, "COUNT", 0},
		{"GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", 1, 1, "BYRADIUS", 1, "km", "WITHCOORD"},
		{"GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", 1, 1, "BYRADIUS", 1, "km", "STORE", "e"},
		{"GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", 1, 1, "BYBOX", 1, 1},
		{"GEOSEARCH", "list", "FROMLONLAT", 1, 1, "BYRADIUS", 1, "km"},
		{"GEOSEARCH", "list", "FROMLONLAT", 1, 1, "junk"},
		{"GEORADIUS", "list", 1, 1, 1, "km"},
		{"GEORADIUSBYMEMBER", "list", "a", 1, "km"},
		{"GEOSEARCHSTORE", "d", "list", "FROMLONLAT", 1, 1, "BYRADIUS", 1, "km"},
		{"GEOSEARCH", "Sicily", "FROMLONLAT", 1, 1, "BYRADIUS", 1, "km\x00junk"},
		{"GEOSEARCH"},
		{"GEORADIUS", "Sicily", 1, 1, 1},
		{"GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", 1, 1, "BYRADIUS"},
	} {
		p.Do(cmd...)
	}
	p.Do("EXISTS", "d", "e")
}

func TestGeoSearchStore(t *testing.T) {
	p := difftest.Start(t)
	geoSicily(p)
	check := func(key string) {
		p.Do("ZRANGE", key, 0, -1, "WITHSCORES")
		p.Do("OBJECT", "ENCODING", key)
		p.DoApprox(2, "TTL", key)
	}
	p.Do("GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", 15, 37, "BYRADIUS", 200, "km")
	check("d")
	p.Do("GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", 15, 37, "BYRADIUS", 200, "km", "STOREDIST")
	check("d")
	p.Do("GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", 15, 37, "BYBOX", 300, 300, "mi", "STOREDIST", "COUNT", 2, "DESC")
	check("d")
	p.Do("GEORADIUS", "Sicily", 15, 37, 200, "km", "STORE", "r")
	check("r")
	p.Do("GEORADIUS", "Sicily", 15, 37, 200, "km", "STOREDIST", "r", "COUNT", 1)
	check("r")
	p.Do("GEORADIUSBYMEMBER", "Sicily", "Palermo", 100, "km", "STORE", "m", "STOREDIST", "m2")
	check("m")
	check("m2")
	// The destination loses its TTL and its type.
	p.Do("SET", "t", "string")
	p.Do("EXPIRE", "t", 100)
	p.Do("GEOSEARCHSTORE", "t", "Sicily", "FROMMEMBER", "a", "BYRADIUS", 50, "km")
	check("t")
	bmNonString(t, p, "list")
	p.Do("GEOSEARCHSTORE", "list", "Sicily", "FROMMEMBER", "a", "BYRADIUS", 50, "km")
	check("list")
	// No result, or no source, deletes the destination.
	p.Do("GEOSEARCHSTORE", "d", "Sicily", "FROMLONLAT", 0, 0, "BYRADIUS", 1, "km")
	p.Do("EXISTS", "d")
	p.Do("GEOSEARCHSTORE", "r", "nokey", "FROMLONLAT", 0, 0, "BYRADIUS", 1, "km")
	p.Do("EXISTS", "r")
	p.Do("GEOSEARCHSTORE", "r", "nokey", "FROMLONLAT", 0, 0, "BYRADIUS", 1, "km")
	p.Do("GEORADIUS", "nokey", 0, 0, 1, "km", "STORE", "m")
	p.Do("EXISTS", "m")
	p.Do("GEORADIUSBYMEMBER", "Sicily", "a", 0, "km", "STORE", "m2")
	check("m2")
	p.Do("GEORADIUSBYMEMBER", "Sicily", "a", 1, "km", "STORE", "m2", "STORE", "m3")
	p.Do("EXISTS", "m2", "m3")
	// The source as destination.
	p.Do("GEOSEARCHSTORE", "Sicily", "Sicily", "FROMMEMBER", "a", "BYRADIUS", 100, "km")
	check("Sicily")
	// A large result is stored in the large form.
	args := []any{"GEOADD", "many"}
	for i := 0; i < 300; i++ {
		args = append(args, strconv.FormatFloat(float64(i)*0.001, 'f', 3, 64), "10", "p"+strconv.Itoa(i))
	}
	p.Do(args...)
	p.Do("GEOSEARCHSTORE", "big", "many", "FROMLONLAT", 0, 10, "BYRADIUS", 500, "km")
	check("big")
	p.Do("GEOSEARCHSTORE", "big", "many", "FROMLONLAT", 0, 10, "BYRADIUS", 500, "km", "COUNT", 10, "STOREDIST")
	check("big")
}

// geoRandomSet adds n random points around (lon, lat), some of them far.
func geoRandomSet(p *difftest.Pair, rng *rand.Rand, key string, n int, lon, lat, spread float64) {
	args := []any{"GEOADD", key}
	for i := 0; i < n; i++ {
		x := lon + (rng.Float64()*2-1)*spread
		y := lat + (rng.Float64()*2-1)*spread
		if rng.IntN(10) == 0 {
			x, y = rng.Float64()*360-180, rng.Float64()*170-85
		}
		x = max(-180, min(180, x))
		y = max(-85.05112878, min(85.05112878, y))
		args = append(args, strconv.FormatFloat(x, 'f', 6, 64), strconv.FormatFloat(y, 'f', 6, 64), fmt.Sprintf("p%d", i))
	}
	p.Do(args...)
}

// TestGeoSearchRandom compares searches over random points around ordinary
// places, the poles, the antimeridian and the origin, with radii from 0 to
// the whole earth: the members found (and their order when unsorted, which
// depends on the boxes searched) must be identical.
func TestGeoSearchRandom(t *testing.T) {
	p := difftest.Start(t)
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("GEOSEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (GEOSEED)", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	centres := [][2]float64{{13.4, 38.1}, {0, 0}, {179.9, 10}, {-179.9, -10}, {20, 84.9}, {-60, -84.9}, {0, 70}, {100, -67}}
	units := []string{"m", "km", "mi", "ft"}
	for ci, c := range centres {
		key := "g" + strconv.Itoa(ci)
		geoRandomSet(p, rng, key, 150, c[0], c[1], 3)
		for q := 0; q < 25; q++ {
			lon := c[0] + (rng.Float64()*2-1)*2
			lat := c[1] + (rng.Float64()*2-1)*2
			lon = max(-180, min(180, lon))
			lat = max(-85.05112878, min(85.05112878, lat))
			slon, slat := strconv.FormatFloat(lon, 'f', 5, 64), strconv.FormatFloat(lat, 'f', 5, 64)
			unit := units[rng.IntN(len(units))]
			r := []float64{0, 1, 100, 5000, 50000, 300000, 3000000, 20000000}[rng.IntN(8)]
			radius := strconv.FormatFloat(r*rng.Float64(), 'f', 3, 64)
			p.Do("GEORADIUS", key, slon, slat, radius, unit, "WITHDIST", "WITHHASH")
			p.Do("GEOSEARCH", key, "FROMLONLAT", slon, slat, "BYRADIUS", radius, unit, "ASC", "WITHCOORD")
			p.Do("GEOSEARCH", key, "FROMLONLAT", slon, slat, "BYRADIUS", radius, unit) // no distance computed
			w := strconv.FormatFloat(r*rng.Float64()*2, 'f', 3, 64)
			h := strconv.FormatFloat(r*rng.Float64()*2, 'f', 3, 64)
			p.Do("GEOSEARCH", key, "FROMLONLAT", slon, slat, "BYBOX", w, h, unit, "WITHDIST")
			p.Do("GEOSEARCH", key, "FROMMEMBER", "p"+strconv.Itoa(rng.IntN(150)), "BYBOX", w, h, unit, "DESC", "COUNT", 1+rng.IntN(20))
			p.Do("GEORADIUSBYMEMBER", key, "p"+strconv.Itoa(rng.IntN(150)), radius, unit, "COUNT", 1+rng.IntN(5), "ANY")
		}
	}
}

// TestGeoSearchEdges: members exactly at a search's limit, one bit inside
// and beyond it (where Keyhive's estimate leaves the decision to the exact
// distance), searches across ±180 degrees and around the poles (where the
// bounding cells widen), and scores no GEOADD wrote.
func TestGeoSearchEdges(t *testing.T) {
	p := difftest.Start(t)
	rng := rand.New(rand.NewPCG(11, 11))
	meters := func(d float64) string { return strconv.FormatFloat(d, 'g', -1, 64) } // parsed back exactly
	for ci, c := range [][2]float64{{13.4, 38.1}, {179.99, 0.5}, {-179.995, -40}, {10, 84.9}, {-100, -84.95}} {
		key := "e" + strconv.Itoa(ci)
		geoRandomSet(p, rng, key, 200, c[0], c[1], 0.3)
		for q := 0; q < 12; q++ {
			a, b := "p"+strconv.Itoa(rng.IntN(200)), "p"+strconv.Itoa(rng.IntN(200))
			sa, sb := p.Do("ZSCORE", key, a), p.Do("ZSCORE", key, b)
			fa, _ := strconv.ParseFloat(sa.Str, 64)
			fb, _ := strconv.ParseFloat(sb.Str, 64)
			lonA, latA := geohash.Decode(fa)
			lonB, latB := geohash.Decode(fb)
			d := geohash.Distance(lonA, latA, lonB, latB)
			lonD := geohash.Distance(lonB, latB, lonA, latB) // BYBOX's test: along b's latitude
			latD := geohash.LatDistance(latB, latA)
			for _, r := range []float64{d, math.Nextafter(d, 0), math.Nextafter(d, math.Inf(1))} {
				p.Do("GEOSEARCH", key, "FROMMEMBER", a, "BYRADIUS", meters(r), "m")
				p.Do("GEORADIUSBYMEMBER", key, a, meters(r), "m", "WITHDIST", "ASC")
			}
			for _, w := range []float64{lonD, math.Nextafter(lonD, 0), math.Nextafter(lonD, math.Inf(1))} {
				p.Do("GEOSEARCH", key, "FROMMEMBER", a, "BYBOX", meters(2*w), meters(2*latD+1), "m")
			}
			for _, h := range []float64{latD, math.Nextafter(latD, 0), math.Nextafter(latD, math.Inf(1))} {
				p.Do("GEOSEARCH", key, "FROMMEMBER", a, "BYBOX", meters(2*lonD+1), meters(2*h), "m", "WITHCOORD")
			}
			// Around the centre, over ±180 degrees or a pole for the large ones.
			r := []string{"500", "30", "300", "3000"}[rng.IntN(4)]
			p.Do("GEOSEARCH", key, "FROMMEMBER", a, "BYRADIUS", r, "km")
			p.Do("GEOSEARCH", key, "FROMMEMBER", a, "BYBOX", r, r, "km")
		}
	}
	// Scores no GEOADD writes decode to the limits, or past them, clamped.
	p.Do("ZADD", "odd", "1e300", "a", "-1", "b", "9.3e18", "c", "4503599627370496", "d", "4503599627370495", "e", "0", "f", "13510798882111487", "g")
	for _, lonLat := range [][2]string{{"180", "85"}, {"-180", "-85"}, {"0", "0"}, {"179.9", "85.05"}} {
		for _, r := range []string{"1", "100", "1000", "20000"} {
			p.Do("GEORADIUS", "odd", lonLat[0], lonLat[1], r, "km", "WITHHASH")
			p.Do("GEOSEARCH", "odd", "FROMLONLAT", lonLat[0], lonLat[1], "BYBOX", r, r, "km")
		}
	}
}

// TestGeoNotifications compares the keyspace events of the geo writes: ZADD's
// for GEOADD, the store's (or del) for the STORE forms.
func TestGeoNotifications(t *testing.T) {
	p := difftest.Start(t, "--notify-keyspace-events", "KEA")
	sub := p.NewConn()
	sub.Do("PSUBSCRIBE", "__key*__:*")
	p.Do("GEOADD", "g", 1, 1, "a", 2, 2, "b")
	p.Do("GEOADD", "g", 1, 1, "a") // no change: no event
	p.Do("GEOSEARCHSTORE", "d", "g", "FROMLONLAT", 1, 1, "BYRADIUS", 500, "km")
	p.Do("GEORADIUS", "g", 1, 1, 500, "km", "STORE", "r")
	p.Do("GEOSEARCHSTORE", "d", "g", "FROMLONLAT", 50, 50, "BYRADIUS", 1, "km") // deletes d
	p.Do("GEORADIUS", "nokey", 1, 1, 1, "km", "STOREDIST", "r")                 // deletes r
	p.Do("ZADD", "z", "INCR", 1, "m")
	for i := 0; i < 12; i++ {
		sub.Read()
	}
	sub.NoReply(50 * time.Millisecond)
}

// TestGeoPropagation checks what the geo writes propagate, on Keyhive and on
// redis-server's AOF alike: GEOADD as the ZADD it runs, the STORE forms as
// sent.
func TestGeoPropagation(t *testing.T) {
	servers := []*propServer{startKeyhiveProp(t)}
	if r := startRedisAOF(t); r != nil {
		servers = append(servers, r)
	}
	for _, s := range servers {
		s.collect()
	}
	steps := []propStep{
		w("GEOADD g 13.361389 38.115556 Palermo 15.087269 37.502669 Catania", "zadd g 3479099956230698 Palermo 3479447370796909 Catania"),
		w("GEOADD g 13.361389 38.115556 Palermo"),
		w("GEOADD g XX CH 1 1 Palermo", "zadd g XX CH 3377822707026402 Palermo"),
		w("GEOADD g NX 1 1 Palermo"),
		w("GEOSEARCHSTORE d g FROMLONLAT 15 37 BYRADIUS 200 km", "GEOSEARCHSTORE d g FROMLONLAT 15 37 BYRADIUS 200 km"),
		w("GEORADIUS g 15 37 200 km STORE r", "GEORADIUS g 15 37 200 km STORE r"),
		w("GEORADIUS g 15 37 200 km"),
		w("GEOSEARCHSTORE d g FROMLONLAT 0 0 BYRADIUS 1 km", "GEOSEARCHSTORE d g FROMLONLAT 0 0 BYRADIUS 1 km"),
		w("GEOSEARCHSTORE d g FROMLONLAT 0 0 BYRADIUS 1 km"),
		w("GEORADIUSBYMEMBER nokey x 1 km STORE r", "GEORADIUSBYMEMBER nokey x 1 km STORE r"),
	}
	for _, step := range steps {
		for _, s := range servers {
			t0 := time.Now().UnixMilli()
			reply := s.conn.do(t, step.cmd...)
			t1 := time.Now().UnixMilli()
			if err := matchPropagated(s.collect(), step.want, 0, t0, t1); err != nil {
				t.Errorf("%s: %q (reply %.60s): %v", s.name, step.cmd, reply, err)
			}
		}
	}
}
