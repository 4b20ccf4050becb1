package strnum

import (
	"math"
	"strconv"
	"testing"
)

func TestParseInt(t *testing.T) {
	good := map[string]int64{"0": 0, "-1": -1, "9223372036854775807": 1<<63 - 1, "-9223372036854775808": -1 << 63}
	for s, want := range good {
		if v, ok := ParseInt([]byte(s)); !ok || v != want {
			t.Errorf("ParseInt(%q) = %d, %v", s, v, ok)
		}
	}
	for _, s := range []string{"", "+1", "01", "-0", " 1", "1 ", "9223372036854775808", "-9223372036854775809", "1e3", "-"} {
		if _, ok := ParseInt([]byte(s)); ok {
			t.Errorf("ParseInt(%q) accepted", s)
		}
	}
}

func TestAddLongDouble(t *testing.T) {
	cases := []struct{ a, b, want string }{
		{"10.5", "0.1", "10.6"},
		{"0", "1", "1"},
		{"5.0e3", "2.0e2", "5200"},
		{"3", "-3", "0"},
		{"-0.5", "0.5", "0"},
		{"1.1", "2.2", "3.3"},
	}
	for _, c := range cases {
		a, ok1 := ParseLongDouble([]byte(c.a))
		b, ok2 := ParseLongDouble([]byte(c.b))
		got, ok := AddLongDouble(a, b)
		if !ok1 || !ok2 || !ok || string(got) != c.want {
			t.Errorf("%s + %s = %q (%v %v %v), want %q", c.a, c.b, got, ok1, ok2, ok, c.want)
		}
	}
	inf, _ := ParseLongDouble([]byte("inf"))
	one, _ := ParseLongDouble([]byte("1"))
	if _, ok := AddLongDouble(inf, one); ok {
		t.Error("inf accepted")
	}
	for _, s := range []string{"nan", " 1", "1x", "", "1_0"} {
		if _, ok := ParseLongDouble([]byte(s)); ok {
			t.Errorf("ParseLongDouble(%q) accepted", s)
		}
	}
}

// FuzzPlainDecimal: whatever PlainDecimal accepts, strconv.ParseFloat (the
// general path) parses to the same bits.
func FuzzPlainDecimal(f *testing.F) {
	for _, s := range []string{"0", "-0", "+1", "1.", ".5", "000000123456", "3.14159", "-2.5", "9007199254740992",
		"9007199254740993", "0.1", "123456789012345.678", "1e3", "inf", "0x10", "1_0", "", "-", ".", "1.2.3",
		"0.0000000000000000000001", "0.00000000000000000000001"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := PlainDecimal(b)
		if !ok {
			return
		}
		want, err := strconv.ParseFloat(string(b), 64)
		if err != nil || math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("PlainDecimal(%q) = %v, strconv: %v, %v", b, got, want, err)
		}
	})
}

func TestParseMemory(t *testing.T) {
	cases := []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true}, {"", 0, true}, {"k", 0, true}, {"123", 123, true},
		{"1b", 1, true}, {"1B", 1, true},
		{"1k", 1000, true}, {"1K", 1000, true}, {"1kb", 1024, true}, {"1kB", 1024, true}, {"1Kb", 1024, true},
		{"2m", 2000000, true}, {"2mb", 2 << 20, true}, {"3g", 3000000000, true}, {"3gb", 3 << 30, true},
		{"1t", 0, false}, {"1.5gb", 0, false}, {"-1", 0, false}, {"+1", 0, false}, {" 1", 0, false},
		{"1 ", 0, false}, {"0x10", 0, false}, {"1kbb", 0, false},
		{"99999999999999999999", 1<<64 - 1, true},             // saturates like strtoull
		{"18446744073709551615k", 18446744073709550616, true}, // and the unit wraps
	}
	for _, c := range cases {
		got, ok := ParseMemory(c.in)
		if ok != c.ok || (ok && got != c.want) {
			t.Errorf("ParseMemory(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
