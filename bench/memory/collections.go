//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/keyhive/keyhive/internal/benchstat"
)

// The collections mode (-collections N) measures the large forms of hashes,
// sets, sorted sets and streams: for each kind it starts a fresh
// redis-server, a fresh keyhive and a second fresh redis-server (the noise
// floor), loads one key of N elements with pipelined multi-element commands
// (XADD: one entry of two small fields per command), and reports RSS growth
// per element: one load per server, deterministic up to the allocator.

// collection is one kind of collection to load.
type collection struct {
	name, cmd string
	args      int // arguments per element
	appendElt func(b []byte, i int) []byte
	single    bool // one element per command
}

var collections = []collection{
	{"hash", "HSET", 2, func(b []byte, i int) []byte {
		return appendBulk(appendBulk(b, elementName(i)), valueName(i))
	}, false},
	{"set", "SADD", 1, func(b []byte, i int) []byte { return appendBulk(b, elementName(i)) }, false},
	{"zset", "ZADD", 2, func(b []byte, i int) []byte {
		return appendBulk(appendBulkString(b, strconv.FormatUint(zscore(i), 10)), elementName(i))
	}, false},
	{"list", "RPUSH", 1, func(b []byte, i int) []byte { return appendBulk(b, elementName(i)) }, false},
	{"stream", "XADD", 5, func(b []byte, i int) []byte {
		b = appendBulk(appendBulkString(b, "*"), []byte("f1"))
		return appendBulk(appendBulk(appendBulk(b, strconv.AppendInt(nil, int64(i), 10)), []byte("f2")), valueName(i))
	}, true},
}

// zscore returns element i's score: ascending with -zset-scores asc, else a
// scramble of i (an odd multiplier is a bijection on 32 bits), so that
// elements arrive in no particular order.
func zscore(i int) uint64 {
	if *flagZScores == "asc" {
		return uint64(i)
	}
	return uint64(uint32(i) * 2654435761)
}

func elementName(i int) []byte { return strconv.AppendInt([]byte("element:"), int64(i), 10) }

func valueName(i int) []byte { return strconv.AppendInt([]byte("value:"), int64(i), 10) }

// collectionResult is what one server measured for one kind.
type collectionResult struct {
	rss, usedMemory float64 // growth per element; usedMemory < 0 if absent
	peak            int64
	encoding        string
	load            time.Duration
}

func runCollections(n int, redisBin, keyhiveBin, tmp string) error {
	if *flagZScores != "random" && *flagZScores != "asc" {
		return errors.New("-zset-scores must be random or asc")
	}
	fmt.Printf("# Keyhive vs redis-server: one collection of %d elements\n\n", n)
	fmt.Printf("members %q, hash values %q, sorted-set scores %s integers; loaded with %d elements per command, %d conns; fresh servers per kind\n\n",
		"element:<i>", "value:<i>", *flagZScores, *flagBatch, *flagLoadConns)
	table := benchstat.New([]string{"kind"}, []string{"B/element (RSS)", "used_memory/element"})
	var notes []string
	for _, c := range collections {
		if *flagKinds != "" && !slices.Contains(strings.Split(*flagKinds, ","), c.name) {
			continue
		}
		note := c.name + ":"
		for _, spec := range [][2]string{{benchstat.Redis, redisBin}, {benchstat.Keyhive, keyhiveBin}, {benchstat.Redis2, redisBin}} {
			s, err := startServer(spec[0], spec[1], tmp)
			if err != nil {
				return err
			}
			r, err := loadCollection(s, c, n)
			s.stop()
			if err != nil {
				return fmt.Errorf("%s %s: %w", s.name, c.name, err)
			}
			// One load per server: round 1.
			table.Add([]string{c.name}, 1, s.name, r.rss, naIfNegative(r.usedMemory))
			note += fmt.Sprintf(" %s %s, peak RSS %.0f MiB;", s.name, r.encoding, float64(r.peak)/(1<<20))
		}
		notes = append(notes, strings.TrimSuffix(note, ";"))
	}
	table.Markdown(os.Stdout, benchstat.Options{Values: true})
	fmt.Printf("\nOne load per server (deterministic up to the allocator: the noise floor, a second redis-server against\nthe first, shows how far). Encodings and peak RSS:\n\n- %s\n\n", strings.Join(notes, "\n- "))
	return nil
}

func loadCollection(s *server, c collection, n int) (collectionResult, error) {
	var r collectionResult
	before, err := rss(s.pid())
	if err != nil {
		return r, err
	}
	mem, err := s.info("memory")
	if err != nil {
		return r, err
	}
	umBefore := infoInt(mem, "used_memory")
	logf("%s: loading a %s of %d elements", s.name, c.name, n)
	start := time.Now()
	if err := loadParallel(n, func(lo, hi int) error { return loadElements(s.addr, c, lo, hi) }); err != nil {
		return r, err
	}
	r.load = time.Since(start)
	time.Sleep(*flagSettle)
	after, err := rss(s.pid())
	if err != nil {
		return r, err
	}
	if mem, err = s.info("memory"); err != nil {
		return r, err
	}
	r.rss = float64(after-before) / float64(n)
	r.usedMemory = -1
	if um := infoInt(mem, "used_memory"); um >= 0 && umBefore >= 0 {
		r.usedMemory = float64(um-umBefore) / float64(n)
	}
	if st, err := procStatus(s.pid()); err == nil {
		r.peak = st["VmHWM"]
	}
	v, err := s.ctl.do("OBJECT", "ENCODING", c.name)
	if err != nil {
		return r, err
	}
	r.encoding = v.str
	logf("%s: %s loaded in %v, %.1f B/element (RSS), encoding %s", s.name, c.name, r.load.Round(time.Millisecond), r.rss, r.encoding)
	return r, nil
}

// loadElements adds elements lo..hi-1 to the collection keyed by its kind's
// name, batch elements per command, load-depth commands in flight.
func loadElements(addr string, c collection, lo, hi int) error {
	cl, err := dial(addr)
	if err != nil {
		return err
	}
	defer cl.close()
	for k := lo; k < hi; {
		sent := 0
		for ; sent < *flagLoadDepth && k < hi; sent++ {
			end := min(k+*flagBatch, hi)
			if c.single {
				end = k + 1
			}
			cl.buf = appendArray(cl.buf, 2+c.args*(end-k))
			cl.buf = appendBulkString(cl.buf, c.cmd)
			cl.buf = appendBulkString(cl.buf, c.name)
			for ; k < end; k++ {
				cl.buf = c.appendElt(cl.buf, k)
			}
		}
		if err := cl.flush(); err != nil {
			return err
		}
		for ; sent > 0; sent-- {
			if err := cl.skip(); err != nil {
				return err
			}
		}
		if cl.nerr > 0 {
			return fmt.Errorf("load: error reply: %s", cl.firstErr)
		}
	}
	return nil
}
