package server_test

// Differential tests of LCS against redis-server.

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/internal/difftest"
)

// lcsOptions are LCS option lists exercised on every pair of values.
var lcsOptions = [][]any{
	nil,
	{"LEN"},
	{"IDX"},
	{"IDX", "WITHMATCHLEN"},
	{"IDX", "MINMATCHLEN", 2},
	{"IDX", "MINMATCHLEN", 4, "WITHMATCHLEN"},
	{"WITHMATCHLEN"},
	{"MINMATCHLEN", 3},
	{"LEN", "MINMATCHLEN", 3, "WITHMATCHLEN"},
}

func lcsAll(p *difftest.Pair, k1, k2 string) {
	for _, opts := range lcsOptions {
		p.Do(append([]any{"LCS", k1, k2}, opts...)...)
	}
}

func TestLcsBasic(t *testing.T) {
	p := difftest.Start(t)
	p.Do("MSET", "a", "ohmytext", "b", "mynewtext")
	lcsAll(p, "a", "b")
	lcsAll(p, "b", "a")
	lcsAll(p, "a", "a")
	p.Do("LCS", "a", "b", "idx", "withmatchlen", "minmatchlen", 0)
	p.Do("LCS", "a", "b", "IDX", "MINMATCHLEN", -5)
	p.Do("LCS", "a", "b", "IDX", "MINMATCHLEN", 100)
	p.Do("LCS", "a", "b", "IDX", "MINMATCHLEN", 1, "MINMATCHLEN", 4)
	p.Do("LCS", "a", "b", "IDX", "IDX", "WITHMATCHLEN", "WITHMATCHLEN")
	p.Do("LCS", "a", "b", "LEN", "LEN")
	p.Do("LCS", "a", "b", "Idx\x00junk")
	// Missing keys are empty strings.
	lcsAll(p, "a", "missing")
	lcsAll(p, "missing", "b")
	lcsAll(p, "missing", "missing2")
	p.Do("SET", "e", "")
	lcsAll(p, "e", "a")
	// Integers are compared as their text.
	p.Do("SET", "n1", 1234567)
	p.Do("SET", "n2", 9234500)
	lcsAll(p, "n1", "n2")
	// Binary values.
	p.Do("SET", "x1", "\x00\xff\r\n\x00a\x00")
	p.Do("SET", "x2", "\xff\x00\x00\r\na")
	lcsAll(p, "x1", "x2")
	p.Do("MSET", "r1", "abcabcabcXYZabc", "r2", "XYZabcabcaXbc")
	lcsAll(p, "r1", "r2")
	p.Do("MSET", "s1", "aaaa", "s2", "aa")
	lcsAll(p, "s1", "s2")
	lcsAll(p, "s2", "s1")
	p.Do("MSET", "d1", "abcdef", "d2", "ghijkl")
	lcsAll(p, "d1", "d2")
}

func TestLcsErrors(t *testing.T) {
	p := difftest.Start(t)
	p.Do("MSET", "a", "hello", "b", "world")
	p.Do("LCS", "a", "b", "LEN", "IDX")
	p.Do("LCS", "a", "b", "IDX", "LEN")
	p.Do("LCS", "a", "b", "IDX", "LEN", "BAD")
	p.Do("LCS", "a", "b", "BAD")
	p.Do("LCS", "a", "b", "")
	p.Do("LCS", "a", "b", "MINMATCHLEN")
	p.Do("LCS", "a", "b", "IDX", "MINMATCHLEN")
	p.Do("LCS", "a", "b", "MINMATCHLEN", "x")
	p.Do("LCS", "a", "b", "MINMATCHLEN", "1.5", "LEN", "IDX")
	p.Do("LCS", "a", "b", "MINMATCHLEN", "9223372036854775808")
	p.Do("LCS", "a", "b", "MINMATCHLEN", "9223372036854775807", "IDX")
	p.Do("LCS", "a", "b", "LEN", "IDX", "MINMATCHLEN", "x")
	p.Do("LCS", "a")
	p.Do("LCS")
	p.Do("LCS", "missing", "missing", "BAD")
}

func TestLcsWrongType(t *testing.T) {
	p := difftest.Start(t)
	bmNonString(t, p, "l")
	p.Do("SET", "s", "foo")
	p.Do("LCS", "l", "s")
	p.Do("LCS", "s", "l")
	p.Do("LCS", "l", "l", "LEN")
	p.Do("LCS", "l", "missing", "BAD")
	p.Do("LCS", "s", "l", "LEN", "IDX")
}

func TestLcsRandom(t *testing.T) {
	p := difftest.Start(t)
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := []string{"ab", "abc", "ACGT", "a\x00\xff"}
	for round := 0; round < 40; round++ {
		abc := alphabet[round%len(alphabet)]
		gen := func() string {
			var sb strings.Builder
			for n := rng.IntN(30); n > 0; n-- {
				sb.WriteByte(abc[rng.IntN(len(abc))])
			}
			return sb.String()
		}
		p.Do("MSET", "a", gen(), "b", gen())
		p.Do("LCS", "a", "b")
		p.Do("LCS", "a", "b", "LEN")
		p.Do("LCS", "a", "b", "IDX", "WITHMATCHLEN")
		p.Do("LCS", "a", "b", "IDX", "MINMATCHLEN", rng.IntN(4))
	}
}

func TestLcsResp3(t *testing.T) {
	p := difftest.Start(t)
	p.Proto(3)
	p.Do("MSET", "a", "ohmytext", "b", "mynewtext")
	lcsAll(p, "a", "b")
	lcsAll(p, "a", "missing")
	p.Do("LCS", "a", "b", "LEN", "IDX")
}

func TestLcsMemoryLimit(t *testing.T) {
	p := difftest.StartIsolated(t, "--proto-max-bulk-len", "1mb")
	// (511+1)*(511+1)*4 bytes is exactly 1mb: allowed.
	p.Do("SET", "a", strings.Repeat("ab", 255)+"c")
	p.Do("SET", "b", strings.Repeat("ba", 255)+"c")
	p.Do("LCS", "a", "b", "LEN")
	p.Do("LCS", "a", "b", "IDX", "MINMATCHLEN", 2)
	// One byte more is refused, whatever the options.
	p.Do("APPEND", "b", "x")
	p.Do("LCS", "a", "b", "LEN")
	p.Do("LCS", "a", "b")
	p.Do("LCS", "b", "a", "IDX")
	p.Do("LCS", "a", "missing")
	p.Do("SET", "big", strings.Repeat("x", 300000))
	p.Do("LCS", "big", "b")
	p.Do("LCS", "big", "missing")
	p.Do("LCS", "big", "big", "IDX", "LEN")
	p.Do("CONFIG", "SET", "proto-max-bulk-len", "2mb")
	p.Do("LCS", "a", "b", "LEN")
}
