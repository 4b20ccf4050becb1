package keyspace

import "testing"

func TestSlotMatchesRedisCluster(t *testing.T) {
	// Values from CLUSTER KEYSLOT on Redis.
	cases := map[string]int{
		"123456789":       12739, // the CRC16-XMODEM check value 0x31C3
		"foo":             12182,
		"{user1000}.a":    Slot([]byte("user1000")),
		"foo{}{bar}":      Slot([]byte("foo{}{bar}")),
		"{dnsmeta}:index": Slot([]byte("dnsmeta")),
	}
	for key, want := range cases {
		if got := Slot([]byte(key)); got != want {
			t.Errorf("Slot(%q) = %d, want %d", key, got, want)
		}
	}
	if Slot([]byte("foo{}{bar}")) == Slot([]byte("bar")) {
		t.Error("an empty first tag must hash the whole key")
	}
}

func TestCRC16SlicingMatchesBytewise(t *testing.T) {
	bytewise := func(b []byte) uint16 {
		var crc uint16
		for _, c := range b {
			crc = crc<<8 ^ crc16Tables[0][byte(crc>>8)^c]
		}
		return crc
	}
	b := make([]byte, 0, 64)
	for i := range 64 {
		if got, want := crc16(b), bytewise(b); got != want {
			t.Fatalf("len %d: %#x, want %#x", len(b), got, want)
		}
		b = append(b, byte(i*37+11))
	}
}

func TestKeysInSlot(t *testing.T) {
	ks := New(1, Hooks{})
	db := ks.DB(0)
	withAll(ks, func() {
		for _, k := range []string{"{a}1", "{a}2", "{a}3", "b", "{b}x"} {
			db.Set([]byte(k), TypeString, EncRaw, []byte("v"), 0, 1)
		}
	})
	slot := Slot([]byte("a"))
	if n := db.CountInSlot(slot); n != 3 {
		t.Fatalf("CountInSlot = %d, want 3", n)
	}
	var got []string
	db.KeysInSlot(slot, 2, func(k []byte) { got = append(got, string(k)) })
	if len(got) != 2 {
		t.Fatalf("KeysInSlot limit 2 gave %q", got)
	}
	if n := db.CountInSlot(Slot([]byte("zzz-none"))); n != 0 {
		t.Fatalf("empty slot counted %d", n)
	}
}

// TestPatternSlot: a pattern's slot is known only from a non-empty hash tag
// that closes before any wildcard, class or escape.
func TestPatternSlot(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		want    int
	}{
		{"weight{mylist}_*", Slot([]byte("mylist"))},
		{"{user1}:*:name", Slot([]byte("user1"))},
		{"plain", -1},
		{"weight_*", -1},
		{"*{mylist}", -1},
		{"{}x*", -1},
		{"a\\{b}", -1},
		{"{ab*}", -1},
		{"{a}{b}*", Slot([]byte("a"))},
	} {
		if got := PatternSlot([]byte(tc.pattern)); got != tc.want {
			t.Errorf("PatternSlot(%q) = %d, want %d", tc.pattern, got, tc.want)
		}
	}
}
