//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/keyhive/keyhive/internal/benchstat"
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

// TestMatrixCommands checks a cell's bookkeeping: its commands cover every
// key and every element once, in parts of the given size, field TTLs after
// the fields.
func TestMatrixCommands(t *testing.T) {
	sh := withFieldTTLs(collectionOf("hash-ttl", "t", "HSET", 2, 5, 2, 2, hashField), 3, elementName)
	if sh.parts != 3+2 || sh.commands(2) != 10 {
		t.Fatalf("parts %d, commands %d", sh.parts, sh.commands(2))
	}
	var got []string
	for i := range sh.commands(2) {
		got = append(got, strings.ReplaceAll(string(sh.command(nil, i)), "\r\n", " "))
	}
	want := []string{
		"*6 $4 HSET $10 hash-ttl:0 $9 element:0 $7 value:0 $9 element:1 $7 value:1 ",
		"*6 $4 HSET $10 hash-ttl:0 $9 element:2 $7 value:2 $9 element:3 $7 value:3 ",
		"*4 $4 HSET $10 hash-ttl:0 $9 element:4 $7 value:4 ",
		"*8 $7 HEXPIRE $10 hash-ttl:0 $5 86400 $6 FIELDS $1 3 $9 element:0 $9 element:1 $9 element:2 ",
		"*7 $7 HEXPIRE $10 hash-ttl:0 $5 86400 $6 FIELDS $1 2 $9 element:3 $9 element:4 ",
	}
	for i, w := range want {
		if got[i] != w {
			t.Errorf("command %d: %q, want %q", i, got[i], w)
		}
		if k1 := strings.Replace(w, "hash-ttl:0", "hash-ttl:1", 1); got[5+i] != k1 {
			t.Errorf("command %d: %q, want %q", 5+i, got[5+i], k1)
		}
	}
	dns := dnsEntry("hash", "past", 1, 200)
	if dns.commands(3) != 3 || !strings.HasPrefix(string(dns.command(nil, 2)), "*10\r\n$4\r\nHSET\r\n$6\r\nhash:2\r\n") {
		t.Errorf("dns entry: %d commands, %.40q", dns.commands(3), dns.command(nil, 2))
	}
	seen := map[string]bool{}
	for _, sh := range shapes {
		if seen[sh.name()] || sh.keys < 1 || sh.elements < 1 {
			t.Errorf("cell %s: duplicate or empty (%d x %d)", sh.name(), sh.keys, sh.elements)
		}
		seen[sh.name()] = true
	}
}

// TestWriteMatrix checks the table's per-element figures and its marking of
// the cells above Redis.
func TestWriteMatrix(t *testing.T) {
	table := benchstat.New([]string{"cell"}, matrixColumns)
	table.Add([]string{"set/past"}, 1, benchstat.Redis, 12800, 13000)
	table.Add([]string{"set/past"}, 1, benchstat.Keyhive, 10000, 14300)
	table.Add([]string{"seed 000 dns"}, 1, benchstat.Redis, 600, 610)
	table.Add([]string{"seed 000 dns"}, 1, benchstat.Keyhive, 300, 305)
	var b strings.Builder
	writeMatrix(&b, table, []matrixRow{{name: "set/past", keys: 100, elements: 200}, {name: "seed 000 dns", keys: 10}})
	for _, want := range []string{
		"| set/past | 100 x 200 | 12800 | 10000 | 64 / 50 | 0.78 | n/a | 13000 | 14300 | 65 / 71.5 | **1.10** | n/a |",
		"| seed 000 dns | 10 keys | 600 | 300 | - | 0.50 | n/a | 610 | 305 | - | 0.50 | n/a |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no row %q in\n%s", want, b.String())
		}
	}
}
