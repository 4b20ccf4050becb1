//go:build linux

package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/keyhive/keyhive/internal/benchstat"
	"github.com/keyhive/keyhive/internal/vset"
)

// The vector set mode (-vset N) gives issue 39's figures for vector sets,
// which redis-server 7.x lacks, so there is no ratio: keyhive alone, once
// per quantization (Q8, the default, and NOQUANT), loads N vectors of
// -vset-dim components into one set (pipelined VADD FP32), then times
// -vset-queries single VSIMs (COUNT 10, default EF) from one connection.
// It reports used_memory growth per vector, right after the load and after
// MEMORY PURGE (a collection), and MEMORY USAGE per vector, against the
// vector's own float32 bytes, the load rate and VSIM's p50, p99 and p99.9.
// The vectors have the structure of learned embeddings (a 16-dimensional
// latent space mapped to -vset-dim, plus noise), as in internal/vset's
// TestRecall.

var (
	flagVSet        = flag.Int("vset", 0, "instead of keys: vector sets, this many vectors per quantization (vset.go)")
	flagVSetDim     = flag.Int("vset-dim", 128, "vector set mode: dimensions")
	flagVSetQueries = flag.Int("vset-queries", 5000, "vector set mode: VSIMs timed per quantization")
)

func fp32(v []float32) []byte {
	b := make([]byte, 0, 4*len(v))
	for _, x := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
	}
	return b
}

func runVSet(n int, keyhiveBin, tmp string) error {
	dim, queries := *flagVSetDim, *flagVSetQueries
	all := vset.EmbeddingLike(n+queries, dim, 16, 39)
	fmt.Printf("# Vector sets: memory per vector and VSIM latency\n\n")
	fmt.Printf("%d vectors of %d dimensions (embedding-like) in one set, VADD with its defaults but the quantization; "+
		"%d VSIM COUNT 10 at the default EF from one connection\n\n", n, dim, queries)
	fmt.Printf("| quantization | used_memory per vector | after MEMORY PURGE | MEMORY USAGE per vector | purged against the float32 vector (%d B) | VADD/s | VSIM p50 | p99 | p99.9 |\n", 4*dim)
	fmt.Printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, quant := range []string{"Q8", "NOQUANT"} {
		s, err := startServer(benchstat.Keyhive, keyhiveBin, tmp)
		if err != nil {
			return err
		}
		err = vsetRun(s, quant, all[:n], all[n:])
		s.stop()
		if err != nil {
			return fmt.Errorf("%s: %w", quant, err)
		}
	}
	return nil
}

func vsetRun(s *server, quant string, data, queries [][]float32) error {
	mem, err := s.info("memory")
	if err != nil {
		return err
	}
	before := infoInt(mem, "used_memory")
	c, err := dial(s.addr)
	if err != nil {
		return err
	}
	defer c.close()
	start := time.Now()
	var failed error
	err = pipeline(c, 0, len(data), 100, func(b []byte, i int) []byte {
		return appendCommand(b, "VADD", "vs", "FP32", string(fp32(data[i])), "e"+strconv.Itoa(i), quant)
	}, func(i int, line []byte) {
		if line[0] == '-' && failed == nil {
			failed = fmt.Errorf("VADD e%d: %s", i, line[1:])
		}
	})
	if err == nil {
		err = failed
	}
	if err != nil {
		return err
	}
	loading := time.Since(start)
	time.Sleep(*flagSettle)
	if mem, err = s.info("memory"); err != nil {
		return err
	}
	grown := infoInt(mem, "used_memory") - before
	// used_memory also holds the arrays the set's growth left behind until
	// the collector frees them; MEMORY PURGE runs a collection.
	if _, err := c.do("MEMORY", "PURGE"); err != nil {
		return err
	}
	time.Sleep(*flagSettle)
	if mem, err = s.info("memory"); err != nil {
		return err
	}
	purged := infoInt(mem, "used_memory") - before
	usage, err := c.do("MEMORY", "USAGE", "vs")
	if err != nil {
		return err
	}
	lat := make([]time.Duration, 0, len(queries))
	for _, q := range queries {
		c.buf = appendCommand(c.buf[:0], "VSIM", "vs", "FP32", string(fp32(q)), "COUNT", "10")
		t0 := time.Now()
		if err := c.flush(); err != nil {
			return err
		}
		if err := c.skip(); err != nil {
			return err
		}
		lat = append(lat, time.Since(t0))
	}
	if c.nerr > 0 {
		return fmt.Errorf("VSIM: %s", c.firstErr)
	}
	slices.Sort(lat)
	at := func(p float64) time.Duration { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	n := float64(len(data))
	fmt.Printf("| %s | %.0f B | %.0f B | %.0f B | %.2f | %.0f | %v | %v | %v |\n", quant, float64(grown)/n, float64(purged)/n,
		float64(usage.n)/n, float64(purged)/n/float64(4*len(data[0])), n/loading.Seconds(),
		at(0.5).Round(time.Microsecond), at(0.99).Round(time.Microsecond), at(0.999).Round(time.Microsecond))
	return nil
}
