package bytemap

import (
	"os"
	"runtime"
	"strconv"
	"testing"
)

func TestMeasureMemory(t *testing.T) {
	if os.Getenv("BYTEMAP_MEASURE") == "" {
		t.Skip()
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m := &Map{}
	for i := 0; i < 1000000; i++ {
		m.Set([]byte("field:"+strconv.Itoa(i)), []byte("value:"+strconv.Itoa(i)))
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	t.Logf("heap %d bytes/field, MemoryBytes %d/field", (after.HeapAlloc-before.HeapAlloc)/1000000, m.MemoryBytes()/1000000)
	runtime.KeepAlive(m)
}
