package command

import (
	"testing"

	"github.com/keyhive/keyhive/resp"
)

// TestCollector: the strings added come back in order, as At and as an
// array reply, and Reset empties it.
func TestCollector(t *testing.T) {
	var c Collector
	for _, s := range []string{"a", "", "ccc"} {
		c.Add([]byte(s))
	}
	if c.Len() != 3 || string(c.At(0)) != "a" || string(c.At(1)) != "" || string(c.At(2)) != "ccc" {
		t.Fatalf("collected %d: %q %q %q", c.Len(), c.At(0), c.At(1), c.At(2))
	}
	var w resp.Writer
	c.WriteArray(&w)
	if got, want := string(w.B), "*3\r\n$1\r\na\r\n$0\r\n\r\n$3\r\nccc\r\n"; got != want {
		t.Errorf("WriteArray = %q, want %q", got, want)
	}
	c.Reset()
	if c.Len() != 0 || len(c.Bytes()) != 0 {
		t.Errorf("after Reset: %d strings, %d bytes", c.Len(), len(c.Bytes()))
	}
}
