//go:build linux

package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/keyhive/keyhive/internal/benchstat"
)

// The shapes mode (-shapes N) loads N elements (keys of one element, or
// N/200 keys of 200) of each shape of value into a
// fresh redis-server, keyhive and second redis-server (the noise floor) in
// turn and reports used_memory and RSS growth per key: the shapes
// applications store, where a type's size class decides its encoding
// (issue 36). One load per server, deterministic up to the allocator.

// shape is a kind of key to load: cmd builds key i's command, which adds
// elements elements (1: one key per element of N).
type shape struct {
	name, about string
	cmd         func(b []byte, i int) []byte
	elements    int
}

// collectionOf is a key of 200 elements (just past the compact encodings'
// 128) added by one command: cmd key, then per element what elem appends.
func collectionOf(name, cmd string, perElement int, elem func(b []byte, j int) []byte) shape {
	const n = 200
	return shape{name: name, elements: n,
		about: fmt.Sprintf("%s <key> with %d elements, one command per key (past the compact encodings' 128 entries)", cmd, n),
		cmd: func(b []byte, i int) []byte {
			b = appendArray(b, 2+perElement*n)
			b = appendBulkString(b, cmd)
			b = appendBulk(b, strconv.AppendInt([]byte(name+":"), int64(i), 10))
			for j := range n {
				b = elem(b, j)
			}
			return b
		}}
}

// dnsMessage stands for a packed DNS response: 200 bytes, binary.
var dnsMessage = func() []byte {
	b := make([]byte, 200)
	for i := range b {
		b[i] = byte(i*131 + 7)
	}
	return b
}()

var shapes = []shape{
	{"dns-hash", "seed 000's cache entry: HSET dns:<i> msg <200 bytes> expires <10 digits> stored <10 digits> hits <0-999> (a hashtable in Redis: the message is past hash-max-listpack-value)",
		func(b []byte, i int) []byte {
			b = appendArray(b, 10)
			b = appendBulkString(b, "HSET")
			b = appendBulk(b, strconv.AppendInt([]byte("dns:"), int64(i), 10))
			b = appendBulk(appendBulkString(b, "msg"), dnsMessage)
			b = appendBulk(appendBulkString(b, "expires"), strconv.AppendInt(nil, 1_800_000_000+int64(i), 10))
			b = appendBulk(appendBulkString(b, "stored"), strconv.AppendInt(nil, 1_790_000_000+int64(i), 10))
			return appendBulk(appendBulkString(b, "hits"), strconv.AppendInt(nil, int64(i%1000), 10))
		}, 1},
	{"small-hash", "the same four fields with a 3-byte message (a listpack in both)",
		func(b []byte, i int) []byte {
			b = appendArray(b, 10)
			b = appendBulkString(b, "HSET")
			b = appendBulk(b, strconv.AppendInt([]byte("dns:"), int64(i), 10))
			b = appendBulk(appendBulkString(b, "msg"), dnsMessage[:3])
			b = appendBulk(appendBulkString(b, "expires"), strconv.AppendInt(nil, 1_800_000_000+int64(i), 10))
			b = appendBulk(appendBulkString(b, "stored"), strconv.AppendInt(nil, 1_790_000_000+int64(i), 10))
			return appendBulk(appendBulkString(b, "hits"), strconv.AppendInt(nil, int64(i%1000), 10))
		}, 1},
	collectionOf("hash200", "HSET", 2, func(b []byte, j int) []byte {
		return appendBulk(appendBulk(b, elementName(j)), valueName(j))
	}),
	collectionOf("set200", "SADD", 1, func(b []byte, j int) []byte { return appendBulk(b, elementName(j)) }),
	collectionOf("zset200", "ZADD", 2, func(b []byte, j int) []byte {
		return appendBulk(appendBulkString(b, strconv.FormatUint(zscore(j), 10)), elementName(j))
	}),
	collectionOf("list200", "RPUSH", 1, func(b []byte, j int) []byte { return appendBulk(b, elementName(j)) }),
}

func runShapes(n int, redisBin, keyhiveBin, tmp string) error {
	fmt.Printf("# Keyhive vs redis-server: %d elements of each shape\n\n", n)
	table := benchstat.New([]string{"shape", "keys"}, []string{"used_memory/key", "B/key (RSS)"})
	var notes []string
	for _, sh := range shapes {
		if *flagKinds != "" && !slices.Contains(strings.Split(*flagKinds, ","), sh.name) {
			continue
		}
		notes = append(notes, sh.name+": "+sh.about)
		for _, spec := range [][2]string{{benchstat.Redis, redisBin}, {benchstat.Keyhive, keyhiveBin}, {benchstat.Redis2, redisBin}} {
			s, err := startServer(spec[0], spec[1], tmp)
			if err != nil {
				return err
			}
			keys := max(1, n/sh.elements)
			used, rssGrowth, err := loadShape(s, sh, keys)
			s.stop()
			if err != nil {
				return fmt.Errorf("%s %s: %w", s.name, sh.name, err)
			}
			table.Add([]string{sh.name, strconv.Itoa(keys)}, 1, s.name, used, rssGrowth)
			logf("%s: %s, %.1f B/key used_memory, %.1f B/key RSS", s.name, sh.name, used, rssGrowth)
		}
	}
	table.Markdown(os.Stdout, benchstat.Options{Values: true})
	fmt.Printf("\nOne load per server (the noise floor, a second redis-server against the first, shows how exact). Shapes:\n\n- %s\n\n", strings.Join(notes, "\n- "))
	return nil
}

// loadShape loads n keys of sh and returns used_memory and RSS growth per key.
func loadShape(s *server, sh shape, n int) (used, rssGrowth float64, err error) {
	rss0, err := rss(s.pid())
	if err != nil {
		return 0, 0, err
	}
	mem, err := s.info("memory")
	if err != nil {
		return 0, 0, err
	}
	um0 := infoInt(mem, "used_memory")
	err = loadParallel(n, func(lo, hi int) error {
		c, err := dial(s.addr)
		if err != nil {
			return err
		}
		defer c.close()
		var failed error
		err = pipeline(c, lo, hi, *flagBatch, sh.cmd, func(i int, line []byte) {
			if line[0] == '-' && failed == nil {
				failed = fmt.Errorf("key %d: %s", i, line[1:])
			}
		})
		if err != nil {
			return err
		}
		return failed
	})
	if err != nil {
		return 0, 0, err
	}
	time.Sleep(*flagSettle)
	rss1, err := rss(s.pid())
	if err != nil {
		return 0, 0, err
	}
	if mem, err = s.info("memory"); err != nil {
		return 0, 0, err
	}
	return float64(infoInt(mem, "used_memory")-um0) / float64(n), float64(rss1-rss0) / float64(n), nil
}
