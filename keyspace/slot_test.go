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
