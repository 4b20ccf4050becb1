//go:build linux

package main

// The memory checks of issue 6, run against redis-server and keyhive in turn:
//
//	go run ./bench/memory -evict-load 2147483648   # volatile-lru under 200mb
//	go run ./bench/memory -reload 10000000         # delete half, write as many
//
// -evict-load loads that many bytes of values (-value bytes each) under
// -maxmemory and volatile-lru, every tenth key without a TTL, and checks that
// every key without a TTL that was written is still there and that peak RSS
// (VmHWM) stayed within maxmemory + its RSS before the load + -rss-overhead. When the keys without a
// TTL alone fill maxmemory, later writes get OOM errors, as in Redis: those
// keys were never written and are not expected.
//
// -reload loads N keys, deletes every other one, writes N/2 new keys, and
// checks that RSS after that is no higher than after the first load.

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
	"time"
)

var (
	flagEvictLoad   = flag.Int64("evict-load", 0, "instead of keys: load this many bytes of values under -maxmemory and volatile-lru, a tenth of the keys without a TTL")
	flagMaxMemory   = flag.Int64("maxmemory", 200<<20, "maxmemory for -evict-load")
	flagRSSOverhead = flag.Int64("rss-overhead", 8<<20, "what keyhive's peak RSS may exceed maxmemory and its RSS before the load by in -evict-load (docs/memory.md)")
	flagReload      = flag.Int("reload", 0, "instead of keys: load N keys, delete half, write N/2 new ones, compare RSS")
	flagValue       = flag.Int("value", 1000, "value bytes for -evict-load and -reload")
)

// runChecks runs -evict-load or -reload on both servers; it fails when
// keyhive misses the acceptance line (redis-server's figures are reported
// for comparison only).
func runChecks(redisBin, keyhiveBin, tmp string) error {
	var failed error
	for _, bin := range [][2]string{{"redis", redisBin}, {"keyhive", keyhiveBin}} {
		s, err := startServer(bin[0], bin[1], tmp)
		if err != nil {
			return err
		}
		if *flagEvictLoad > 0 {
			err = evictLoad(s)
		} else {
			err = reload(s)
		}
		s.stop()
		var miss checkFailed
		switch {
		case errors.As(err, &miss) && bin[0] == "keyhive":
			failed = err
		case errors.As(err, &miss):
			logf("%s: %v", bin[0], err)
		case err != nil:
			return err
		}
	}
	return failed
}

type checkFailed string

func (e checkFailed) Error() string { return string(e) }

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }

// pipeline sends n commands built by add, batch by batch, and passes each
// one-line reply (+OK, -ERR ..., :1) to reply with the command's index.
func pipeline(c *client, lo, hi, batch int, add func(b []byte, i int) []byte, reply func(i int, line []byte)) error {
	for from := lo; from < hi; from += batch {
		to := min(from+batch, hi)
		for i := from; i < to; i++ {
			c.buf = add(c.buf, i)
		}
		if err := c.flush(); err != nil {
			return err
		}
		for i := from; i < to; i++ {
			l, err := c.line()
			if err != nil {
				return err
			}
			reply(i, l)
		}
	}
	return nil
}

func appendCommand(b []byte, args ...string) []byte {
	b = appendArray(b, len(args))
	for _, a := range args {
		b = appendBulkString(b, a)
	}
	return b
}

func evictLoad(s *server) error {
	for _, kv := range [][2]string{{"maxmemory", strconv.FormatInt(*flagMaxMemory, 10)}, {"maxmemory-policy", "volatile-lru"}} {
		if _, err := s.ctl.do("CONFIG", "SET", kv[0], kv[1]); err != nil {
			return err
		}
	}
	c, err := dial(s.addr)
	if err != nil {
		return err
	}
	defer c.close()
	startup, err := rss(s.pid())
	if err != nil {
		return err
	}
	value := string(make([]byte, *flagValue))
	n := int(*flagEvictLoad / int64(*flagValue))
	stored := make([]bool, n) // keys without a TTL that were written
	var oom, peak int64
	start := time.Now()
	for lo := 0; lo < n; lo += 10_000 {
		err := pipeline(c, lo, min(lo+10_000, n), 100, func(b []byte, i int) []byte {
			if i%10 == 0 {
				return appendCommand(b, "SET", "keep:"+strconv.Itoa(i), value)
			}
			return appendCommand(b, "SET", "cache:"+strconv.Itoa(i), value, "EX", "3600")
		}, func(i int, l []byte) {
			switch {
			case l[0] == '-':
				oom++
			case i%10 == 0:
				stored[i] = true
			}
		})
		if err != nil {
			return err
		}
		if r, err := rss(s.pid()); err == nil {
			peak = max(peak, r)
		}
	}
	loadDur := time.Since(start)
	var written, lost int64
	err = pipeline(c, 0, n/10, 100, func(b []byte, i int) []byte {
		return appendCommand(b, "EXISTS", "keep:"+strconv.Itoa(i*10))
	}, func(i int, l []byte) {
		if stored[i*10] {
			written++
			if string(l) != ":1" {
				lost++
			}
		}
	})
	if err != nil {
		return err
	}
	st, err := procStatus(s.pid())
	if err != nil {
		return err
	}
	peak = max(peak, st["VmHWM"])
	info, err := s.info("stats")
	if err != nil {
		return err
	}
	size, err := s.ctl.do("DBSIZE")
	if err != nil {
		return err
	}
	fmt.Printf("%-8s loaded %s of %d-byte values in %v: %d keys without TTL written, %d lost; %d with TTL kept; evicted_keys %d; OOM replies %d; peak RSS %s = maxmemory %s + %s (%s before the load)\n",
		s.name, mb(int64(n)*int64(*flagValue)), *flagValue, loadDur.Round(time.Millisecond), written, lost, size.n-(written-lost), infoInt(info, "evicted_keys"), oom,
		mb(peak), mb(*flagMaxMemory), mb(peak-*flagMaxMemory), mb(startup))
	switch {
	case lost > 0:
		return checkFailed(fmt.Sprintf("%d of %d keys without a TTL were evicted", lost, written))
	case peak > *flagMaxMemory+startup+*flagRSSOverhead:
		return checkFailed(fmt.Sprintf("peak RSS %s > maxmemory %s + %s before the load + %s", mb(peak), mb(*flagMaxMemory), mb(startup), mb(*flagRSSOverhead)))
	}
	return nil
}

// reload loads N keys, deletes every other one, writes N/2 new ones, and
// reads RSS after each step (after -settle, as the first load's figure).
func reload(s *server) error {
	c, err := dial(s.addr)
	if err != nil {
		return err
	}
	defer c.close()
	value := string(make([]byte, *flagValue))
	n := *flagReload
	var rssAt, usedAt [3]int64
	step := func(k int, lo, hi int, add func(b []byte, i int) []byte) error {
		err := pipeline(c, lo, hi, 1000, add, func(_ int, l []byte) {
			if l[0] == '-' {
				err = fmt.Errorf("%s: %s", s.name, l)
			}
		})
		if err != nil {
			return err
		}
		time.Sleep(*flagSettle)
		info, err := s.info("memory")
		if err != nil {
			return err
		}
		usedAt[k] = infoInt(info, "used_memory")
		rssAt[k], err = rss(s.pid())
		return err
	}
	start := time.Now()
	if err := step(0, 0, n, func(b []byte, i int) []byte { return appendCommand(b, "SET", "k:"+strconv.Itoa(i), value) }); err != nil {
		return err
	}
	if err := step(1, 0, n/2, func(b []byte, i int) []byte { return appendCommand(b, "DEL", "k:"+strconv.Itoa(2*i)) }); err != nil {
		return err
	}
	if err := step(2, 0, n/2, func(b []byte, i int) []byte { return appendCommand(b, "SET", "n:"+strconv.Itoa(i), value) }); err != nil {
		return err
	}
	fmt.Printf("%-8s %d keys of %d-byte values, %v: RSS (used_memory) after load %s (%s), after deleting half %s (%s), after writing %d new %s (%s): %.3fx the first\n",
		s.name, n, *flagValue, time.Since(start).Round(time.Millisecond), mb(rssAt[0]), mb(usedAt[0]), mb(rssAt[1]), mb(usedAt[1]), n/2, mb(rssAt[2]), mb(usedAt[2]), float64(rssAt[2])/float64(rssAt[0]))
	if rssAt[2] > rssAt[0] {
		return checkFailed(fmt.Sprintf("RSS after reload %s > after the first load %s", mb(rssAt[2]), mb(rssAt[0])))
	}
	return nil
}
