package osmem

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestGrow: Remap, and the copy other systems grow by, keep the contents
// and add zeros.
func TestGrow(t *testing.T) {
	for name, grow := range map[string]func([]byte, int) []byte{"Remap": Remap, "copyOnGrow": copyOnGrow} {
		b := Map(PageSize)
		for i := range b {
			b[i] = byte(i)
		}
		want := bytes.Clone(b)
		b = grow(b, 3*PageSize)
		if len(b) != 3*PageSize || !bytes.Equal(b[:PageSize], want) || bytes.Count(b[PageSize:], []byte{0}) != 2*PageSize {
			t.Errorf("%s: contents not kept, or the new pages not zeros", name)
		}
		Release(b[PageSize:])
		b[len(b)-1] = 1 // still mapped
		Unmap(b)
	}
}

// TestMapFile: MapFile's bytes are the file's.
func TestMapFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	data := bytes.Repeat([]byte("keyhive"), 1000)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := MapFile(f, len(data))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m, data) {
		t.Error("mapped bytes differ from the file's")
	}
	if err := UnmapFile(m); err != nil {
		t.Error(err)
	}
}
