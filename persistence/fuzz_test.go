package persistence

import (
	"bytes"
	"testing"
)

// FuzzLZF checks that what the compressor writes decompresses back.
func FuzzLZF(f *testing.F) {
	f.Add([]byte("#!lua name=lib\nredis.register_function('f', function() return 1 end)"))
	f.Add(bytes.Repeat([]byte("abc"), 100))
	var c Compressor
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 3 {
			return
		}
		out := c.Compress(in, len(in)+64)
		if out == nil {
			t.Fatal("compression with room to spare failed")
		}
		back, ok := Decompress(out, len(in))
		if !ok || !bytes.Equal(back, in) {
			t.Fatalf("round trip: %q -> %q", in, back)
		}
	})
}
