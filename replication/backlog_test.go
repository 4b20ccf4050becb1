package replication

import (
	"bytes"
	"testing"
)

func TestBacklogKeepsSizeAndReaders(t *testing.T) {
	b := NewBacklog(100<<10, 1000)
	chunk := bytes.Repeat([]byte("x"), 1000)
	r := b.NewReader(1000)
	for range 300 {
		b.Append(chunk)
	}
	start, end := b.Offsets()
	if end != 1000+300*1000 || start != 1000 {
		t.Fatalf("offsets %d %d: the reader at 1000 must keep everything", start, end)
	}
	buf := make([]byte, 7000)
	var got int64
	for {
		n := r.Read(buf)
		if n == 0 {
			break
		}
		got += int64(n)
	}
	if got != 300*1000 || r.Lag() != 0 {
		t.Fatalf("read %d, lag %d", got, r.Lag())
	}
	r.Close()
	b.Append(bytes.Repeat([]byte("y"), 2*blockSize))
	start, end = b.Offsets()
	if end-start < 100<<10 || end-start > 100<<10+2*blockSize {
		t.Fatalf("holds %d bytes, want about %d", end-start, 100<<10)
	}
	if b.NewReader(1000) != nil || b.NewReader(start-1) != nil || b.NewReader(end+1) != nil {
		t.Fatal("a reader where the backlog holds nothing")
	}
	r = b.NewReader(end - 5)
	b.Append([]byte("abc"))
	n := r.Read(buf)
	if string(buf[:n]) != "yyyyyabc" {
		t.Fatalf("read %q", buf[:n])
	}
}

func TestBacklogAppendAllocatesNothing(t *testing.T) {
	b := NewBacklog(1<<20, 0)
	cmd := []byte("*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\n")
	for range 100000 { // the blocks of the kept size exist: they are reused
		b.Append(cmd)
	}
	if n := testing.AllocsPerRun(1000, func() { b.Append(cmd) }); n != 0 {
		t.Fatalf("%v allocations per append", n)
	}
}

func TestIDsContinue(t *testing.T) {
	ids := FreshIDs()
	if !ids.CanContinue(ids.ID, 5) || ids.CanContinue(NoID, 0) {
		t.Fatal("fresh IDs")
	}
	p := ids.Promote(100)
	if !p.CanContinue(ids.ID, 101) || p.CanContinue(ids.ID, 102) || !p.CanContinue(p.ID, 500) {
		t.Fatalf("promoted %+v", p)
	}
}
