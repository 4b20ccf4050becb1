package scripting

import (
	"bytes"
	"testing"
)

// FuzzLZF checks that what the compressor writes decompresses back.
func FuzzLZF(f *testing.F) {
	f.Add([]byte("#!lua name=lib\nredis.register_function('f', function() return 1 end)"))
	f.Add(bytes.Repeat([]byte("abc"), 100))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 3 {
			return
		}
		c := lzfCompress(in, len(in)+64)
		if c == nil {
			t.Fatal("compression with room to spare failed")
		}
		out, ok := lzfDecompress(c, len(in))
		if !ok || !bytes.Equal(out, in) {
			t.Fatalf("round trip: %q -> %q", in, out)
		}
	})
}
