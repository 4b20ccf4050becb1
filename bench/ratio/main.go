// Command ratio prints the table of per-round ratios for the benchmark
// scripts in bench/ (package internal/benchstat does the statistics). It
// reads tab-separated measurements on standard input: a header line naming
// the label columns, then "round", "server", then the metrics; then one line
// per row, round and server (redis, keyhive, or redis2, the second
// redis-server that gives the noise floor):
//
//	test	pipeline	round	server	ops/s
//	SET	16	1	keyhive	412000
//	SET	16	1	redis	301000
//	SET	16	1	redis2	296000
//
//	... | go run ./bench/ratio -geomean
//
// With -order ROUND it prints the servers in the order they run in that
// round instead (benchstat.Order), for the scripts' loops.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/keyhive/keyhive/internal/benchstat"
)

func main() {
	values := flag.Bool("values", true, "print each server's median over the rounds beside the ratios")
	geomean := flag.Bool("geomean", false, "add a row with the geometric mean of each metric's ratios (per round, then the median)")
	order := flag.Int("order", 0, "print the servers in the order they run in this round (counted from 1) and exit")
	flag.Parse()
	if *order > 0 {
		fmt.Println(strings.Join(benchstat.Order(*order), " "))
		return
	}
	t, err := benchstat.Read(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ratio:", err)
		os.Exit(1)
	}
	t.Markdown(os.Stdout, benchstat.Options{Values: *values, Geomean: *geomean})
}
