//go:build linux

package main

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/keyhive/keyhive/internal/benchstat"
)

// The JSON mode (-json N) checks issue 38's two targets for JSON documents,
// which redis-server 7.x cannot store: the comparison is what an application
// does there instead, keep the document's text in a string.
//
// Memory: a fresh redis-server, keyhive and second redis-server each load N
// documents of about 1 KB (nested objects and arrays, like a user record
// with its orders): the redis-servers as strings (SET), keyhive as JSON
// (JSON.SET). used_memory growth per key is set against the text's length
// and against redis-server's string of the same text.
//
// Paths: keyhive holds one document per size from 1 KB to 1 MB (the orders
// array grows), plus a second 1 KB document for the noise floor. Each round
// times, for every document in turn (the order rotates each round), a batch
// of pipelined JSON.GET of one field, JSON.NUMINCRBY of one field, and GET
// of the whole text on redis-server; it reports per round the time per
// command against the 1 KB document's, the median of those ratios and their
// range. The target: reaching one field costs the same whatever the size
// (within 2x from 1 KB to 1 MB).

// jsonDoc returns document i with the given number of orders as compact
// JSON text. The field the paths read, meta.version, comes after the orders
// array: reaching it skips the array whole.
func jsonDoc(i, orders int) []byte {
	b := fmt.Appendf(nil, `{"id":%d,"name":"user %d","email":"user%d@example.com","active":true,`+
		`"profile":{"age":%d,"city":"Amsterdam","tags":["a","bb","ccc"],"score":12.5},"orders":[`, i, i, i, 30+i%40)
	for j := range orders {
		if j > 0 {
			b = append(b, ',')
		}
		b = fmt.Appendf(b, `{"sku":"SKU-%05d","qty":%d,"price":%.2f,"paid":%t}`, j*7+i, j+1, 9.99+float64(j), j%2 == 0)
	}
	return fmt.Appendf(b, `],"meta":{"created":%d,"updated":%d,"version":3,"source":"api"}}`, 1700000000+i, 1700000500+i)
}

// jsonDocOfSize returns document 0 with the fewest orders that make it at
// least size bytes.
func jsonDocOfSize(size int) []byte {
	lo, hi := 0, size // hi orders are always enough
	for lo < hi {
		mid := (lo + hi) / 2
		if len(jsonDoc(0, mid)) >= size {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return jsonDoc(0, lo)
}

const jsonOrders = 14 // about 1 KB per document

func runJSON(n int, redisBin, keyhiveBin, tmp string) error {
	fmt.Printf("# JSON documents: memory and reaching one field\n\n")
	if err := jsonMemory(n, redisBin, keyhiveBin, tmp); err != nil {
		return err
	}
	return jsonPaths(redisBin, keyhiveBin, tmp)
}

func jsonMemory(n int, redisBin, keyhiveBin, tmp string) error {
	var text int64
	for i := range n {
		text += int64(len(jsonDoc(i, jsonOrders)))
	}
	perDoc := float64(text) / float64(n)
	perKey := map[string]float64{}
	for _, spec := range [][2]string{{benchstat.Redis, redisBin}, {benchstat.Keyhive, keyhiveBin}, {benchstat.Redis2, redisBin}} {
		s, err := startServer(spec[0], spec[1], tmp)
		if err != nil {
			return err
		}
		cmd := "SET"
		if s.name == benchstat.Keyhive {
			cmd = "JSON.SET"
		}
		docs := shape{typ: "json", elements: 1, cmd: func(b []byte, i, _ int) []byte {
			return appendDocCommand(b, cmd, "doc:"+strconv.Itoa(i), jsonDoc(i, jsonOrders))
		}}
		used, _, err := loadShape(s, docs, n)
		s.stop()
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		perKey[s.name] = used
		logf("%s: %d documents with %s, %.1f B/key used_memory", s.name, n, cmd, perKey[s.name])
	}
	r, k, r2 := perKey[benchstat.Redis], perKey[benchstat.Keyhive], perKey[benchstat.Redis2]
	fmt.Printf("## Memory: %d documents of %.0f bytes of JSON text on average (keys `doc:<i>`)\n\n", n, perDoc)
	fmt.Printf("| | used_memory per key | against the text | against redis-server's string |\n|---|---:|---:|---:|\n")
	fmt.Printf("| redis-server, the text as a string (SET) | %.0f | %.2f | |\n", r, r/perDoc)
	fmt.Printf("| keyhive, the document (JSON.SET) | %.0f | **%.2f** (target <= 1.00) | **%.2f** |\n", k, k/perDoc, k/r)
	fmt.Printf("| noise floor: a second redis-server (SET) | %.0f | %.2f | %.2f |\n\n", r2, r2/perDoc, r2/r)
	return nil
}

// appendDocCommand appends SET key doc or JSON.SET key $ doc.
func appendDocCommand(b []byte, cmd, key string, doc []byte) []byte {
	if cmd == "JSON.SET" {
		b = appendArray(b, 4)
		b = appendBulkString(appendBulkString(appendBulkString(b, cmd), key), "$")
	} else {
		b = appendArray(b, 3)
		b = appendBulkString(appendBulkString(b, cmd), key)
	}
	return appendBulk(b, doc)
}

// jsonSizes are the paths part's document sizes; "1 KB again" is a second
// document of the first size, the noise floor.
var jsonSizes = []struct {
	name string
	size int
}{{"1 KB", 1 << 10}, {"1 KB again", 1 << 10}, {"10 KB", 10 << 10}, {"100 KB", 100 << 10}, {"1 MB", 1 << 20}}

// jsonOps are the commands the paths part times, per document key.
var jsonOps = []struct {
	name   string
	server string // the server it runs on
	args   func(key string) []string
}{
	{"JSON.GET key $.meta.version", benchstat.Keyhive, func(k string) []string { return []string{"JSON.GET", k, "$.meta.version"} }},
	{"JSON.NUMINCRBY key $.meta.version 1", benchstat.Keyhive, func(k string) []string { return []string{"JSON.NUMINCRBY", k, "$.meta.version", "1"} }},
	{"redis-server: GET key (the whole text)", benchstat.Redis, func(k string) []string { return []string{"GET", k} }},
}

func jsonPaths(redisBin, keyhiveBin, tmp string) error {
	servers := map[string]*server{}
	for _, spec := range [][2]string{{benchstat.Redis, redisBin}, {benchstat.Keyhive, keyhiveBin}} {
		s, err := startServer(spec[0], spec[1], tmp)
		if err != nil {
			return err
		}
		defer s.stop()
		servers[s.name] = s
	}
	texts := make([]int, len(jsonSizes))
	for i, sz := range jsonSizes {
		doc := jsonDocOfSize(sz.size)
		texts[i] = len(doc)
		key := "doc:" + strconv.Itoa(i)
		for _, s := range servers {
			cmd := "SET"
			if s.name == benchstat.Keyhive {
				cmd = "JSON.SET"
			}
			s.ctl.buf = appendDocCommand(s.ctl.buf[:0], cmd, key, doc)
			if err := s.ctl.flush(); err != nil {
				return err
			}
			if l, err := s.ctl.line(); err != nil || l[0] != '+' {
				return fmt.Errorf("%s %s: %q %v", s.name, cmd, l, err)
			}
		}
	}
	const perBatch, depth = 10000, 50
	// times[op][size][round]: microseconds per command.
	times := make([][][]float64, len(jsonOps))
	for o, op := range jsonOps {
		times[o] = make([][]float64, len(jsonSizes))
		c, err := dial(servers[op.server].addr)
		if err != nil {
			return err
		}
		defer c.close()
		for i := range jsonSizes { // warm-up, not measured
			if err := c.repeat(op.args("doc:"+strconv.Itoa(i)), perBatch, depth); err != nil {
				return fmt.Errorf("%s: %w", op.name, err)
			}
		}
		for round := range *flagRounds {
			order := make([]int, len(jsonSizes))
			for i := range order {
				order[i] = (i + round) % len(order)
			}
			for _, i := range order {
				args := op.args("doc:" + strconv.Itoa(i))
				start := time.Now()
				if err := c.repeat(args, perBatch, depth); err != nil {
					return fmt.Errorf("%s: %w", op.name, err)
				}
				times[o][i] = append(times[o][i], float64(time.Since(start).Microseconds())/perBatch)
			}
		}
		logf("%s: done", op.name)
	}
	fmt.Printf("## Reaching one field: time per command against the 1 KB document's\n\n")
	fmt.Printf("%d rounds; per round %d commands per document, %d in flight, one connection, after one unmeasured batch per document; the documents in a rotating order. Each cell: the median of the per-round ratios (time per command on this document / on the 1 KB one) [min-max], then the median time per command. \"1 KB again\" is the noise floor.\n\n",
		*flagRounds, perBatch, depth)
	fmt.Printf("| document | text bytes |")
	for _, op := range jsonOps {
		fmt.Printf(" %s |", op.name)
	}
	fmt.Printf("\n|---|---:|%s\n", bytes.Repeat([]byte("---:|"), len(jsonOps)))
	for i, sz := range jsonSizes {
		fmt.Printf("| %s | %d |", sz.name, texts[i])
		for o := range jsonOps {
			var ratios []float64
			for r := range times[o][i] {
				ratios = append(ratios, times[o][i][r]/times[o][0][r])
			}
			fmt.Printf(" %s, %.1f us |", benchstat.FormatRatio(benchstat.Summarize(ratios)), slices.Sorted(slices.Values(times[o][i]))[len(times[o][i])/2])
		}
		fmt.Println()
	}
	fmt.Println()
	return nil
}

// repeat sends args n times, depth commands in flight, and reads the
// replies whole; an error reply fails it.
func (c *client) repeat(args []string, n, depth int) error {
	for sent := 0; sent < n; sent += depth {
		k := min(depth, n-sent)
		for range k {
			c.buf = appendCommand(c.buf, args...)
		}
		if err := c.flush(); err != nil {
			return err
		}
		for range k {
			if err := c.skip(); err != nil {
				return err
			}
		}
		if c.nerr > 0 {
			return replyError(c.firstErr)
		}
	}
	return nil
}
