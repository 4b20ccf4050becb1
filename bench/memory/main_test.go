//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestAppendKey(t *testing.T) {
	got := string(appendKey(nil, 1234567))
	if want := "$16\r\nk:00000001234567\r\n"; got != want {
		t.Fatalf("appendKey = %q, want %q", got, want)
	}
}

func TestSkip(t *testing.T) {
	in := "+OK\r\n$3\r\nfoo\r\n$-1\r\n:42\r\n*2\r\n$1\r\na\r\n*-1\r\n-ERR boom\r\n-ERR second\r\n"
	c := &client{r: bufio.NewReader(strings.NewReader(in))}
	for i := 0; i < 7; i++ {
		if err := c.skip(); err != nil {
			t.Fatalf("skip %d: %v", i, err)
		}
	}
	if c.nerr != 2 || c.firstErr != "ERR boom" {
		t.Fatalf("nerr=%d firstErr=%q", c.nerr, c.firstErr)
	}
	if err := c.skip(); err == nil {
		t.Fatal("skip at EOF: want error")
	}
}

func TestGCColumns(t *testing.T) {
	r := &result{
		gcBefore: map[string]string{"keyhive_gc_cycles": "10", "keyhive_gc_pause_total_us": "1500",
			"keyhive_gc_cpu_seconds": "0.25", "keyhive_process_cpu_seconds": "2.5"},
		gcAfter: map[string]string{"keyhive_gc_cycles": "25", "keyhive_gc_pause_total_us": "4000",
			"keyhive_gc_cpu_seconds": "0.5", "keyhive_process_cpu_seconds": "10.5"},
		opsDur: 20 * time.Second,
	}
	c, p, cpu := gcColumns(r)
	if c != "15" || p != "2.5 ms" || cpu != "3.12" { // 0.25 GC of 8.25 s used
		t.Fatalf("got %q %q %q", c, p, cpu)
	}
	delete(r.gcAfter, "keyhive_gc_cpu_seconds")
	if _, _, cpu = gcColumns(r); cpu != "0.01 (STW only)" {
		t.Fatalf("fallback cpu = %q", cpu)
	}
	r = &result{gcBefore: map[string]string{}, gcAfter: map[string]string{}}
	if c, p, cpu = gcColumns(r); c != "n/a" || p != "n/a" || cpu != "n/a" {
		t.Fatalf("redis got %q %q %q", c, p, cpu)
	}
}

func TestCollectionElements(t *testing.T) {
	want := map[string]string{
		"hash":   "$9\r\nelement:7\r\n$7\r\nvalue:7\r\n",
		"set":    "$9\r\nelement:7\r\n",
		"list":   "$9\r\nelement:7\r\n",
		"zset":   "$10\r\n1401181143\r\n$9\r\nelement:7\r\n", // 7 * 2654435761 mod 2^32
		"stream": "$1\r\n*\r\n$2\r\nf1\r\n$1\r\n7\r\n$2\r\nf2\r\n$7\r\nvalue:7\r\n",
	}
	for _, c := range collections {
		if got := string(c.appendElt(nil, 7)); got != want[c.name] {
			t.Errorf("%s: %q, want %q", c.name, got, want[c.name])
		}
	}
	*flagZScores = "asc"
	defer func() { *flagZScores = "random" }()
	if zscore(7) != 7 {
		t.Errorf("ascending score %d", zscore(7))
	}
}

func TestJSONDocs(t *testing.T) {
	for _, d := range [][]byte{jsonDoc(7, jsonOrders), jsonDocOfSize(1 << 20)} {
		if !json.Valid(d) {
			t.Fatalf("not JSON: %.200s", d)
		}
	}
	if n := len(jsonDoc(0, jsonOrders)); n < 900 || n > 1100 {
		t.Errorf("a document of %d orders has %d bytes, want about 1 KB", jsonOrders, n)
	}
	if n := len(jsonDocOfSize(1 << 20)); n < 1<<20 || n > 1<<20+100 {
		t.Errorf("jsonDocOfSize(1 MB) has %d bytes", n)
	}
}
