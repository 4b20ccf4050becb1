//go:build linux

package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/keyhive/keyhive/internal/benchstat"
	"github.com/keyhive/keyhive/workloads"
	"github.com/redis/go-redis/v9"
)

// The matrix mode (-matrix) loads each type of value (string, hash, hash
// with field TTLs, list, set, sorted set, stream) at each size class (inside
// the compact encoding, just past it, 1,000 elements, one key of 1M) into a
// fresh redis-server, keyhive and second redis-server (the noise floor) in
// turn, as many keys as keep a cell's load to a few GB, and reports
// used_memory and RSS growth per key and per element; then the five seed
// workloads' data sets (their Prepare, then a fixed run of their requests).
// Issue 36: where a size class decides the encoding, the memory per key can
// jump. One load per server, deterministic up to the allocator.

// shape is one cell of the matrix: keys keys of elements elements each,
// loaded with parts commands per key; cmd appends key's part'th command.
type shape struct {
	typ, class string
	about      string
	keys       int
	elements   int
	parts      int
	cmd        func(b []byte, key, part int) []byte
}

func (sh shape) name() string { return sh.typ + "/" + sh.class }

// commands is how many commands load the shape's keys.
func (sh shape) commands(keys int) int { return keys * max(1, sh.parts) }

// command appends the i'th of the shape's commands: key i/parts, part i%parts.
func (sh shape) command(b []byte, i int) []byte {
	p := max(1, sh.parts)
	return sh.cmd(b, i/p, i%p)
}

func keyName(typ string, key int) []byte { return strconv.AppendInt([]byte(typ+":"), int64(key), 10) }

// collectionOf is a shape of n elements per key, added perCommand at a time
// by cmd key elem...: per element what elem appends for element j of the
// key (j counts over the key's elements, so a key's elements are distinct).
func collectionOf(typ, class, cmd string, keys, n, perCommand, argsPerElement int, elem func(b []byte, j int) []byte) shape {
	perCommand = min(perCommand, n)
	return shape{typ: typ, class: class, keys: keys, elements: n, parts: (n + perCommand - 1) / perCommand,
		about: fmt.Sprintf("%s %s:<i> with %d elements, %d per command", cmd, typ, n, perCommand),
		cmd: func(b []byte, key, part int) []byte {
			lo, hi := part*perCommand, min((part+1)*perCommand, n)
			b = appendArray(b, 2+argsPerElement*(hi-lo))
			b = appendBulkString(b, cmd)
			b = appendBulk(b, keyName(typ, key))
			for j := lo; j < hi; j++ {
				b = elem(b, j)
			}
			return b
		}}
}

// withFieldTTLs is sh (a hash) with every field given a TTL of a day by
// HEXPIRE, perCommand fields per command after the fields are set.
func withFieldTTLs(sh shape, perCommand int, field func(j int) []byte) shape {
	perCommand = min(perCommand, sh.elements)
	set, ttls := max(1, sh.parts), (sh.elements+perCommand-1)/perCommand
	hashCmd := sh.cmd
	sh.typ, sh.parts = "hash-ttl", set+ttls
	sh.about += fmt.Sprintf(", then HEXPIRE <key> 86400 FIELDS on every field, %d per command", perCommand)
	sh.cmd = func(b []byte, key, part int) []byte {
		if part < set {
			return hashCmd(b, key, part)
		}
		lo, hi := (part-set)*perCommand, min((part-set+1)*perCommand, sh.elements)
		b = appendArray(b, 5+hi-lo)
		b = appendBulkString(b, "HEXPIRE")
		b = appendBulk(b, keyName("hash-ttl", key))
		b = appendBulkString(b, "86400")
		b = appendBulkString(b, "FIELDS")
		b = appendBulk(b, strconv.AppendInt(nil, int64(hi-lo), 10))
		for j := lo; j < hi; j++ {
			b = appendBulk(b, field(j))
		}
		return b
	}
	return sh
}

// dnsMessage stands for a packed DNS response: 200 bytes, binary.
var dnsMessage = func() []byte {
	b := make([]byte, 200)
	for i := range b {
		b[i] = byte(i*131 + 7)
	}
	return b
}()

// dnsEntry is seed 000's cache entry as typ:<key>, its message msgLen
// bytes: HSET msg expires stored hits.
func dnsEntry(typ, class string, keys, msgLen int) shape {
	return shape{typ: typ, class: class, keys: keys, elements: 4,
		about: fmt.Sprintf("seed 000's cache entry: HSET %s:<i> msg <%d bytes> expires <10 digits> stored <10 digits> hits <0-999>", typ, msgLen),
		cmd: func(b []byte, key, _ int) []byte {
			b = appendArray(b, 10)
			b = appendBulkString(b, "HSET")
			b = appendBulk(b, keyName(typ, key))
			b = appendBulk(appendBulkString(b, "msg"), dnsMessage[:msgLen])
			b = appendBulk(appendBulkString(b, "expires"), strconv.AppendInt(nil, 1_800_000_000+int64(key), 10))
			b = appendBulk(appendBulkString(b, "stored"), strconv.AppendInt(nil, 1_790_000_000+int64(key), 10))
			return appendBulk(appendBulkString(b, "hits"), strconv.AppendInt(nil, int64(key%1000), 10))
		}}
}

var dnsFields = [][]byte{[]byte("msg"), []byte("expires"), []byte("stored"), []byte("hits")}

// stringOf is keys strings of n bytes, SET one per command.
func stringOf(class string, keys, n int) shape {
	v := make([]byte, n)
	for i := range v {
		v[i] = 'a' + byte(i%26) // not an integer: no int encoding
	}
	return shape{typ: "string", class: class, keys: keys, elements: 1,
		about: fmt.Sprintf("SET string:<i> <%d bytes>", n),
		cmd: func(b []byte, key, _ int) []byte {
			b = appendArray(b, 3)
			b = appendBulkString(b, "SET")
			return appendBulk(appendBulk(b, keyName("string", key)), v)
		}}
}

func hashField(b []byte, j int) []byte {
	return appendBulk(appendBulk(b, elementName(j)), valueName(j))
}

func member(b []byte, j int) []byte { return appendBulk(b, elementName(j)) }

func scoredMember(b []byte, j int) []byte {
	return appendBulk(appendBulkString(b, strconv.FormatUint(zscore(j), 10)), elementName(j))
}

// streamEntry is XADD's arguments after the key: an automatic ID and two
// small fields.
func streamEntry(b []byte, j int) []byte {
	b = appendBulk(appendBulkString(b, "*"), []byte("f1"))
	return appendBulk(appendBulk(appendBulk(b, strconv.AppendInt(nil, int64(j), 10)), []byte("f2")), valueName(j))
}

// The size classes: compact is inside Redis's compact encodings (64-byte
// values; 128 entries, 512 for hashes; for strings the 44-byte embedded
// string), past just beyond them (a hash by its value's size: 1,000 fields
// are past the entries), medium 1,000 elements, huge one key of 1M. The key
// counts keep each cell's load to about 2 GB in redis-server.
var shapes = []shape{
	stringOf("compact", 1_000_000, 16),
	stringOf("past", 1_000_000, 200),
	stringOf("medium", 200_000, 1000),

	dnsEntry("hash", "compact", 1_000_000, 3),
	dnsEntry("hash", "past", 1_000_000, 200),
	collectionOf("hash", "medium", "HSET", 20_000, 1000, 1000, 2, hashField),
	collectionOf("hash", "huge", "HSET", 1, 1_000_000, 1000, 2, hashField),

	withFieldTTLs(dnsEntry("hash-ttl", "compact", 1_000_000, 3), 4, func(j int) []byte { return dnsFields[j] }),
	withFieldTTLs(dnsEntry("hash-ttl", "past", 1_000_000, 200), 4, func(j int) []byte { return dnsFields[j] }),
	withFieldTTLs(collectionOf("hash-ttl", "medium", "HSET", 20_000, 1000, 1000, 2, hashField), 1000, elementName),
	withFieldTTLs(collectionOf("hash-ttl", "huge", "HSET", 1, 1_000_000, 1000, 2, hashField), 1000, elementName),

	collectionOf("list", "compact", "RPUSH", 1_000_000, 16, 16, 1, member),
	collectionOf("list", "past", "RPUSH", 100_000, 200, 200, 1, member),
	collectionOf("list", "medium", "RPUSH", 20_000, 1000, 1000, 1, member),
	collectionOf("list", "huge", "RPUSH", 1, 1_000_000, 1000, 1, member),

	collectionOf("set", "compact", "SADD", 1_000_000, 16, 16, 1, member),
	collectionOf("set", "past", "SADD", 100_000, 200, 200, 1, member),
	collectionOf("set", "medium", "SADD", 20_000, 1000, 1000, 1, member),
	collectionOf("set", "huge", "SADD", 1, 1_000_000, 1000, 1, member),

	collectionOf("zset", "compact", "ZADD", 1_000_000, 16, 16, 2, scoredMember),
	collectionOf("zset", "past", "ZADD", 50_000, 200, 200, 2, scoredMember),
	collectionOf("zset", "medium", "ZADD", 10_000, 1000, 1000, 2, scoredMember),
	collectionOf("zset", "huge", "ZADD", 1, 1_000_000, 1000, 2, scoredMember),

	// A stream is a tree of listpack nodes of up to 100 entries in Redis;
	// XADD adds one entry per command.
	collectionOf("stream", "compact", "XADD", 100_000, 10, 1, 5, streamEntry),
	collectionOf("stream", "past", "XADD", 10_000, 200, 1, 5, streamEntry),
	collectionOf("stream", "medium", "XADD", 2_000, 1000, 1, 5, streamEntry),
	collectionOf("stream", "huge", "XADD", 1, 1_000_000, 1, 5, streamEntry),
}

// selected reports whether -kinds names the cell, its type or its class.
func selected(name string) bool {
	if *flagKinds == "" {
		return true
	}
	typ, class, _ := strings.Cut(name, "/")
	for _, k := range strings.Split(*flagKinds, ",") {
		if k == name || k == typ || k == class {
			return true
		}
	}
	return false
}

// scaled is n keys times -matrix-scale, at least one.
func scaled(n int) int { return max(1, int(float64(n)**flagMatrixScale)) }

// matrixRow is one row of the table: keys keys of elements elements.
type matrixRow struct {
	name, about string
	keys        int
	elements    int // per key; 0 for the seeds' data sets (mixed shapes)
	encoding    map[string]string
}

// matrixColumns are the table's metrics, growth per key.
var matrixColumns = []string{"used_memory/key", "RSS/key"}

func runMatrix(redisBin, keyhiveBin, tmp string) error {
	fmt.Printf("# Keyhive vs redis-server: memory by data shape\n\n")
	table := benchstat.New([]string{"cell"}, matrixColumns)
	var rows []matrixRow
	servers := [][2]string{{benchstat.Redis, redisBin}, {benchstat.Keyhive, keyhiveBin}}
	if *flagNoiseFloor {
		servers = append(servers, [2]string{benchstat.Redis2, redisBin})
	}
	fieldTTLs, err := redisAtLeast(redisBin, 7, 4)
	if err != nil {
		return err
	}
	for _, sh := range shapes {
		if !selected(sh.name()) {
			continue
		}
		if sh.typ == "hash-ttl" && !fieldTTLs {
			logf("%s: skipped, %s has no HEXPIRE (Redis 7.4+; -redis picks another)", sh.name(), redisBin)
			continue
		}
		row := matrixRow{name: sh.name(), about: sh.about, keys: scaled(sh.keys), elements: sh.elements, encoding: map[string]string{}}
		for _, spec := range servers {
			s, err := startServer(spec[0], spec[1], tmp)
			if err != nil {
				return err
			}
			start := time.Now()
			used, rssGrowth, err := loadShape(s, sh, row.keys)
			if err == nil {
				row.encoding[s.name], err = encoding(s, string(keyName(sh.typ, 0)))
			}
			s.stop()
			if err != nil {
				return fmt.Errorf("%s %s: %w", s.name, sh.name(), err)
			}
			table.Add([]string{row.name}, 1, s.name, used, rssGrowth)
			logf("%s: %s, %d keys in %v: %.1f B/key used_memory, %.1f B/key RSS, %s", s.name, sh.name(), row.keys,
				time.Since(start).Round(time.Millisecond), used, rssGrowth, row.encoding[s.name])
		}
		rows = append(rows, row)
	}
	for _, w := range workloads.All {
		name := "seed " + w.Seed + " " + w.Name
		if !selected(name) && !selected("seeds") {
			continue
		}
		row := matrixRow{name: name, about: fmt.Sprintf("%s: its Prepare, then %d of its requests from one client (rng seed 1)", name, *flagSeedOps)}
		for _, spec := range servers {
			s, err := startServer(spec[0], spec[1], tmp)
			if err != nil {
				return err
			}
			keys, used, rssGrowth, err := loadSeed(s, w, *flagSeedOps)
			s.stop()
			if err != nil {
				return fmt.Errorf("%s %s: %w", s.name, name, err)
			}
			if s.name == benchstat.Redis {
				row.keys = keys
			} else if keys != row.keys {
				logf("%s: %s holds %d keys, redis %d", s.name, name, keys, row.keys)
			}
			table.Add([]string{row.name}, 1, s.name, used/float64(keys), rssGrowth/float64(keys))
			logf("%s: %s, %d keys: %.1f B/key used_memory, %.1f B/key RSS", s.name, name, keys, used/float64(keys), rssGrowth/float64(keys))
		}
		rows = append(rows, row)
	}
	writeMatrix(os.Stdout, table, rows)
	return nil
}

// writeMatrix writes the table: per cell its keys and elements, per column
// both servers' figures per key and per element, the ratio and the noise
// floor; then the cells' commands and encodings.
func writeMatrix(w io.Writer, table *benchstat.Table, rows []matrixRow) {
	header := []string{"cell", "keys x elements"}
	for _, m := range matrixColumns {
		header = append(header, m+" redis", "keyhive", "per element redis / keyhive", "keyhive/redis", "noise floor")
	}
	fmt.Fprintf(w, "| %s |\n|---|---:|%s\n", strings.Join(header, " | "), strings.Repeat("---:|", len(header)-2))
	for i, r := range table.Rows() {
		row := rows[i]
		size := strconv.Itoa(row.keys) + " x " + strconv.Itoa(row.elements)
		if row.elements == 0 {
			size = strconv.Itoa(row.keys) + " keys"
		}
		cells := []string{row.name, size}
		for _, c := range r.Cells {
			perElement := "-"
			if row.elements > 0 && c.Redis.N > 0 && c.Keyhive.N > 0 {
				e := float64(row.elements)
				perElement = benchstat.FormatValue(benchstat.Spread{N: 1, Median: c.Redis.Median / e}) + " / " +
					benchstat.FormatValue(benchstat.Spread{N: 1, Median: c.Keyhive.Median / e})
			}
			ratio := benchstat.FormatRatio(c.Ratio)
			if c.Ratio.N > 0 && c.Ratio.Median > 1 {
				ratio = "**" + ratio + "**"
			}
			cells = append(cells, benchstat.FormatValue(c.Redis), benchstat.FormatValue(c.Keyhive), perElement, ratio, benchstat.FormatRatio(c.Floor))
		}
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	fmt.Fprintf(w, "\nOne load per server into a fresh server. Cells (OBJECT ENCODING of the first key, redis / keyhive):\n\n")
	for _, row := range rows {
		enc := ""
		if row.encoding != nil {
			enc = fmt.Sprintf(" (%s / %s)", row.encoding[benchstat.Redis], row.encoding[benchstat.Keyhive])
		}
		fmt.Fprintf(w, "- %s: %s%s\n", row.name, row.about, enc)
	}
	fmt.Fprintln(w)
}

// redisAtLeast reports whether bin --version is major.minor or later.
func redisAtLeast(bin string, major, minor int) (bool, error) {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return false, err
	}
	_, v, _ := strings.Cut(string(out), " v=")
	f := strings.SplitN(v, ".", 3)
	if len(f) < 2 {
		return false, fmt.Errorf("%s --version: %q", bin, out)
	}
	a, _ := strconv.Atoi(f[0])
	b, _ := strconv.Atoi(f[1])
	return a > major || a == major && b >= minor, nil
}

func encoding(s *server, key string) (string, error) {
	v, err := s.ctl.do("OBJECT", "ENCODING", key)
	return v.str, err
}

// loadShape loads n keys of sh and returns used_memory and RSS growth per key.
func loadShape(s *server, sh shape, n int) (used, rssGrowth float64, err error) {
	usedTotal, rssTotal, err := measureLoad(s, func() error {
		return loadParallel(sh.commands(n), func(lo, hi int) error {
			c, err := dial(s.addr)
			if err != nil {
				return err
			}
			defer c.close()
			// Whole replies are read (HEXPIRE's is an array): a reply
			// left unread would end the load before the server has run
			// its commands, or stall a server that stops reading while
			// its replies wait.
			for from := lo; from < hi; from += *flagBatch {
				to := min(from+*flagBatch, hi)
				for i := from; i < to; i++ {
					c.buf = sh.command(c.buf, i)
				}
				if err := c.flush(); err != nil {
					return err
				}
				for range to - from {
					if err := c.skip(); err != nil {
						return err
					}
				}
				if c.nerr > 0 {
					return fmt.Errorf("error reply: %s", c.firstErr)
				}
			}
			return nil
		})
	})
	return usedTotal / float64(n), rssTotal / float64(n), err
}

// loadSeed loads w's data set: its Prepare, then ops of its requests from one
// client with a fixed seed. It returns the keys held and the growth of
// used_memory and RSS.
func loadSeed(s *server, w workloads.Workload, ops int) (keys int, used, rssGrowth float64, err error) {
	rdb := redis.NewClient(&redis.Options{Addr: s.addr})
	defer rdb.Close()
	ctx := context.Background()
	used, rssGrowth, err = measureLoad(s, func() error {
		if err := w.Prepare(ctx, rdb); err != nil {
			return err
		}
		rng := rand.New(rand.NewPCG(1, 1))
		for range ops {
			if err := w.Op(ctx, rdb, rng); err != nil && err != redis.Nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, 0, 0, err
	}
	n, err := rdb.DBSize(ctx).Result()
	if err == nil && n == 0 {
		err = fmt.Errorf("%s left no keys", w.Name)
	}
	return int(n), used, rssGrowth, err
}

// measureLoad runs load and returns the growth of used_memory and RSS over
// it, read after -settle.
func measureLoad(s *server, load func() error) (used, rssGrowth float64, err error) {
	rss0, err := rss(s.pid())
	if err != nil {
		return 0, 0, err
	}
	mem, err := s.info("memory")
	if err != nil {
		return 0, 0, err
	}
	um0 := infoInt(mem, "used_memory")
	if err := load(); err != nil {
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
	return float64(infoInt(mem, "used_memory") - um0), float64(rss1 - rss0), nil
}
