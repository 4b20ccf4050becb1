package persistence

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/stream"
)

// redisPayloads returns the DUMP payloads redis-server 7.0 wrote for
// testdata/redis-7.0.rdb's keys (4-byte length, payload, repeated).
func redisPayloads(tb testing.TB) [][]byte {
	data, err := os.ReadFile("testdata/redis-7.0-dump-payloads.bin")
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	for len(data) >= 4 {
		n := binary.LittleEndian.Uint32(data)
		out = append(out, data[4:4+n])
		data = data[4+n:]
	}
	return out
}

// loadFile loads the RDB file at name: its aux fields, function libraries,
// and records by "db:key".
func loadFile(t *testing.T, name string) (aux map[string]string, functions []string, keys map[string]Record) {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	aux, keys = map[string]string{}, map[string]Record{}
	err = Load(data, true, Handler{
		Aux:      func(k, v []byte) error { aux[string(k)] = string(v); return nil },
		Function: func(code []byte) error { functions = append(functions, string(code)); return nil },
		Key: func(r *Record) error {
			keys[strconv.Itoa(r.DB)+":"+string(r.Key)] = *r
			return nil
		},
	})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return aux, functions, keys
}

var redisFiles = []string{"testdata/redis-7.0.rdb", "testdata/redis-7.0-uncompressed.rdb"}

func TestLoadRedisFile(t *testing.T) {
	for _, name := range redisFiles {
		aux, functions, keys := loadFile(t, name)
		if aux["redis-ver"] != "7.0.15" || len(functions) != 1 || len(keys) != 13 {
			t.Fatalf("%s: aux %v, %d functions, %d keys", name, aux, len(functions), len(keys))
		}
		check := func(key string, typ byte, n int) {
			t.Helper()
			r, ok := keys[key]
			if !ok || r.Value.Type != typ || len(r.Value.Elems) != n {
				t.Errorf("%s: %s: %+v", name, key, r.Value.Type)
			}
		}
		check("0:l:big", TypeList, 1500)
		check("0:set:int", TypeSet, 4)
		check("0:z:big", TypeZSet, 150)
		check("0:h:big", TypeHash, 600)
		check("1:db1", TypeString, 0)
		if r := keys["0:s:int"]; string(r.Value.Str) != "12345" || r.ExpireAt != 4102444800000 {
			t.Errorf("%s: s:int = %+v", name, r)
		}
		if z := keys["0:z:small"].Value; z.Scores[0] != math.Inf(-1) || string(z.Elems[2]) != "b" {
			t.Errorf("%s: z:small = %+v", name, z)
		}
	}
}

// redis74Files were written by redis-server 7.4.1 (RDB version 12): listpack
// sets, streams whose consumers have active times, a function library;
// and a cluster node's file, with slot sizes.
var redis74Files = []string{"testdata/redis-7.4.rdb", "testdata/redis-7.4-uncompressed.rdb", "testdata/redis-7.4-cluster.rdb"}

func TestLoadRedis74Files(t *testing.T) {
	for _, name := range redis74Files {
		aux, functions, keys := loadFile(t, name)
		check := func(key string, typ byte, n int) {
			t.Helper()
			r, ok := keys[key]
			if !ok || r.Value.Type != typ || len(r.Value.Elems) != n {
				t.Errorf("%s: %s: type %d, %d elements", name, key, r.Value.Type, len(r.Value.Elems))
			}
		}
		if name == "testdata/redis-7.4-cluster.rdb" {
			if len(keys) != 4 || keys["0:a"].ExpireAt != 4102444800000 {
				t.Errorf("%s: %d keys, a %+v", name, len(keys), keys["0:a"])
			}
			check("0:c", TypeList, 2)
			check("0:d", TypeSet, 2)
			continue
		}
		if aux["redis-ver"] != "7.4.1" || len(functions) != 1 || len(keys) != 16 {
			t.Fatalf("%s: aux %v, %d functions, %d keys", name, aux, len(functions), len(keys))
		}
		check("0:set:lp", TypeSet, 4)
		check("0:set:int", TypeSet, 4)
		check("0:set:big", TypeSet, 600)
		check("0:set:bigstr", TypeSet, 200)
		check("0:l:big", TypeList, 1500)
		check("0:z:big", TypeZSet, 150)
		check("0:h:big", TypeHash, 1200) // fields and values
		check("1:db1", TypeString, 0)
		st := keys["0:st"].Value.Stream
		if st == nil || st.Length != 3 || len(st.Groups) != 1 || len(st.Groups[0].Consumers) != 2 || len(st.Groups[0].PEL) != 2 {
			t.Errorf("%s: st = %+v", name, st)
		}
		if empty := keys["0:st:empty"].Value.Stream; empty == nil || empty.Length != 0 || empty.MaxDeletedID != (stream.ID{Ms: 5, Seq: 1}) {
			t.Errorf("%s: st:empty = %+v", name, empty)
		}
	}
}

// TestLoadRedis74Truncated cuts the 7.4 files at every fifth length: an
// error with an offset, never a panic.
func TestLoadRedis74Truncated(t *testing.T) {
	for _, name := range redis74Files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for n := 0; n < len(data); n += 5 {
			var e *Error
			if err := Load(data[:n], true, Handler{}); !errors.As(err, &e) || e.Offset > int64(n) {
				t.Fatalf("%s truncated at %d: %v", name, n, err)
			}
		}
	}
}

// TestLoadUnknownType: a value type this loader does not know (past Redis
// 7.4's hashes with field TTLs, 22 to 25) is an error at its offset.
func TestLoadUnknownType(t *testing.T) {
	for _, typ := range []byte{26, 27, 243} {
		file := []byte("REDIS0012")
		file = append(file, OpSelectDB, 0, typ, 1, 'k', 0)
		file = append(file, OpEOF)
		file = binary.LittleEndian.AppendUint64(file, CRC64(0, file))
		var e *Error
		if err := Load(file, true, Handler{}); !errors.As(err, &e) || e.Offset != 12 {
			t.Errorf("type %d: %v", typ, err)
		}
	}
	if err := Load([]byte("REDIS0013\xff"), false, Handler{}); err == nil || !strings.Contains(err.Error(), "can't handle RDB format version 0013") {
		t.Errorf("version 13: %v", err)
	}
}

// TestLoadCorruption cuts and flips a real file: every truncation and every
// checksum mismatch is an error with an offset, never a panic.
func TestLoadCorruption(t *testing.T) {
	data, err := os.ReadFile(redisFiles[0])
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < len(data); n += 7 {
		err := Load(data[:n], true, Handler{})
		var e *Error
		if !errors.As(err, &e) || e.Offset > int64(n) {
			t.Fatalf("truncated at %d: %v", n, err)
		}
	}
	bad := bytes.Clone(data)
	bad[len(bad)-20] ^= 1
	if err := Load(bad, true, Handler{}); err == nil {
		t.Fatal("a flipped bit passed the checksum")
	}
	binary.LittleEndian.PutUint64(bad[len(bad)-8:], 0) // saved with rdbchecksum no
	if err := Load(bad[:len(bad)-20+1], false, Handler{}); err == nil {
		t.Fatal("truncated file loaded")
	}
}

func TestDecodeRedisPayloads(t *testing.T) {
	for _, p := range redisPayloads(t) {
		v, err := DecodeDump(p)
		if err != nil {
			t.Fatalf("%q: %v", p, err)
		}
		if v.Type == TypeString && v.Str == nil {
			t.Fatalf("%q: no string", p)
		}
	}
}

func TestListpackRoundTrip(t *testing.T) {
	values := []string{"", "a", "0", "127", "128", "-1", "-4096", "4095", "4096", "-32768", "32767",
		"-8388608", "8388607", "2147483647", "-2147483648", "2147483648", "9223372036854775807",
		"-9223372036854775808", "9223372036854775808", "007", "1.5", string(bytes.Repeat([]byte("x"), 63)),
		string(bytes.Repeat([]byte("y"), 64)), string(bytes.Repeat([]byte("z"), 4095)), string(bytes.Repeat([]byte("w"), 5000))}
	var lp Listpack
	lp.Reset()
	for _, v := range values {
		lp.Append([]byte(v))
	}
	var got []string
	if err := ListpackEntries(lp.Bytes(), func(e []byte) error { got = append(got, string(e)); return nil }); err != nil {
		t.Fatal(err)
	}
	for i, v := range values {
		want := v
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && strconv.FormatInt(n, 10) == v {
			want = strconv.FormatInt(n, 10)
		}
		if got[i] != want {
			t.Errorf("entry %d: %q, want %q", i, got[i], want)
		}
	}
	b := lp.Bytes()
	for n := range len(b) {
		if ListpackEntries(b[:n], func([]byte) error { return nil }) == nil {
			t.Fatalf("truncated listpack of %d bytes accepted", n)
		}
	}
}

func TestIntsetRoundTrip(t *testing.T) {
	for _, vals := range [][]int64{{}, {-5, 1, 2}, {-100000, 7, 100000}, {-1, 5000000000}} {
		b := AppendIntset(nil, len(vals), func(i int) int64 { return vals[i] })
		var got []int64
		if err := IntsetValues(b, func(v int64) error { got = append(got, v); return nil }); err != nil || len(got) != len(vals) {
			t.Fatalf("%v: %v %v", vals, got, err)
		}
		for i := range vals {
			if got[i] != vals[i] {
				t.Fatalf("%v: %v", vals, got)
			}
		}
	}
	if IntsetValues(AppendIntset(nil, 2, func(i int) int64 { return 3 - int64(i) }), func(int64) error { return nil }) == nil {
		t.Fatal("descending intset accepted")
	}
}

// TestOldEncodings decodes hand-made values in the encodings of older
// Redis versions that 7.0 still loads.
func TestOldEncodings(t *testing.T) {
	for _, c := range []struct {
		name, value string
		want        []string
	}{
		// ziplist: zlbytes, zltail, zllen, then "a", 1 (an immediate), -3 (int8), end.
		{"list ziplist", "\x0a\x13\x13\x00\x00\x00\x0f\x00\x00\x00\x03\x00\x00\x01a\x03\xf2\x02\xfe\xfd\xff", []string{"a", "1", "-3"}},
		{"quicklist v1", "\x0e\x01\x10\x10\x00\x00\x00\x0d\x00\x00\x00\x02\x00\x00\x01a\x03\xf2\xff", []string{"a", "1"}},
		{"hash zipmap", "\x09\x0e\x02\x01f\x01\x00v\x02ab\x02\x00xy\xff", []string{"f", "v", "ab", "xy"}},
		{"hash ziplist", "\x0d\x11\x11\x00\x00\x00\x0d\x00\x00\x00\x02\x00\x00\x01f\x03\x01v\xff", []string{"f", "v"}},
		{"zset ziplist", "\x0c\x10\x10\x00\x00\x00\x0d\x00\x00\x00\x02\x00\x00\x01m\x03\xf3\xff", []string{"m"}},
		{"zset v1", "\x03\x02\x01a\x031.5\x01b\xfe", []string{"a", "b"}},
		{"set", "\x02\x02\x01a\x01b", []string{"a", "b"}},
		{"list", "\x01\x02\x01a\xc0\x07", []string{"a", "7"}},
	} {
		d := &decoder{b: []byte(c.value)}
		var v Value
		err := func() (err error) {
			defer catch(&err)
			v, err = d.value(d.byte())
			return err
		}()
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if len(v.Elems) != len(c.want) {
			t.Errorf("%s: %q", c.name, v.Elems)
			continue
		}
		for i := range c.want {
			if string(v.Elems[i]) != c.want[i] {
				t.Errorf("%s: %q", c.name, v.Elems)
			}
		}
	}
}

func FuzzLoad(f *testing.F) {
	for _, name := range append(redisFiles, redis74Files...) {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, typ := range []byte{TypeStreamListpacks, TypeStreamListpack2, TypeStreamListpack3} {
		f.Add(streamFile(typ))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		Load(data, true, Handler{Key: func(r *Record) error {
			if r.Value.Type == TypeZSet && len(r.Value.Scores) != len(r.Value.Elems) {
				t.Fatalf("zset with %d members and %d scores", len(r.Value.Elems), len(r.Value.Scores))
			}
			return nil
		}})
	})
}

func FuzzDecodeDump(f *testing.F) {
	for _, p := range redisPayloads(f) {
		f.Add(p)
	}
	for _, typ := range []byte{TypeStreamListpacks, TypeStreamListpack2, TypeStreamListpack3} {
		f.Add(streamPayload(typ))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		v, err := DecodeDump(p)
		if err == nil && v.Type == TypeHash && len(v.Elems)%2 != 0 {
			t.Fatal("hash with an odd number of elements")
		}
		if err == nil && v.Type == TypeStream {
			for _, n := range v.Stream.Nodes {
				if _, err := n.Walk(func([][]byte) {}, func(stream.ID, bool, [][]byte) {}); err != nil {
					t.Fatalf("a node that decoded does not walk: %v", err)
				}
			}
		}
	})
}

// FuzzListpack checks the decoder on arbitrary bytes, and that what decodes
// encodes back to entries that decode the same.
func FuzzListpack(f *testing.F) {
	var lp Listpack
	lp.Reset()
	for _, v := range []string{"a", "1", "-70000", "12345678901", "xyz"} {
		lp.Append([]byte(v))
	}
	f.Add(bytes.Clone(lp.Bytes()))
	f.Fuzz(func(t *testing.T, b []byte) {
		var entries []string
		if ListpackEntries(b, func(e []byte) error { entries = append(entries, string(e)); return nil }) != nil {
			return
		}
		var again Listpack
		again.Reset()
		for _, e := range entries {
			again.Append([]byte(e))
		}
		i := 0
		if err := ListpackEntries(again.Bytes(), func(e []byte) error {
			if string(e) != entries[i] {
				t.Fatalf("entry %d: %q became %q", i, entries[i], e)
			}
			i++
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
}
