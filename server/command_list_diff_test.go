package server_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/keyhive/keyhive/cmdspec"
	"github.com/keyhive/keyhive/internal/difftest"
)

// notYet are the commands (or subcommands) of redis-server 7.0.15 and
// 7.4.1 that Keyhive does not have yet: none now.
var notYet = map[string]bool{}

func commandList(c *difftest.Client) []string {
	var names []string
	for _, e := range c.Do("COMMAND", "LIST").Elems {
		names = append(names, e.Str)
	}
	return names
}

// TestCommandListCoverage: Keyhive has every command and subcommand that
// redis-server 7.0.15 and 7.4.1 have, except those of notYet.
func TestCommandListCoverage(t *testing.T) {
	for _, oracle := range []func(testing.TB, ...string) *difftest.Pair{difftest.Start, difftest.Start74} {
		p := oracle(t)
		keyhive := commandList(p.Keyhive())
		var missing []string
		for _, name := range commandList(p.Redis()) {
			base, _, _ := strings.Cut(name, "|")
			if !slices.Contains(keyhive, name) && !notYet[base] && !notYet[name] {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			t.Errorf("Keyhive lacks %s", strings.Join(missing, " "))
		}
	}
}

// TestRedis8CommandsListed: every command Keyhive has that redis-server
// 7.4.1 lacks is a Redis 8.x command by its spec, and the README's
// compatibility table has its row with the version ("| HGETEX | 8.0 |").
func TestRedis8CommandsListed(t *testing.T) {
	p := difftest.Start74(t)
	redis := commandList(p.Redis())
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range commandList(p.Keyhive()) {
		if slices.Contains(redis, name) {
			continue
		}
		if keyhiveOnly(name) { // Keyhive's own family: the README lists it
			if !strings.Contains(string(readme), "| "+strings.ToUpper(strings.Split(name, "|")[0])+" | Keyhive |") {
				t.Errorf("README's compatibility table lacks the row | %s | Keyhive |", strings.ToUpper(name))
			}
			continue
		}
		spec := cmdspec.Lookup(name)
		if spec == nil || !strings.HasPrefix(spec.Since, "8.") {
			t.Errorf("%s: not in redis-server 7.4.1 and not a Redis 8.x command by its spec", name)
			continue
		}
		if strings.Contains(name, "|") {
			continue
		}
		version := strings.TrimSuffix(spec.Since, ".0")
		if !strings.Contains(string(readme), "| "+strings.ToUpper(name)+" | "+version+" |") {
			t.Errorf("README's compatibility table lacks the row | %s | %s |", strings.ToUpper(name), version)
		}
	}
}

// redis8CoreCommands counts Keyhive's core commands that came with Redis 8.x
// (ZMOVE, XNACK, SEXPIRE...), which the 7.4.1 oracle lacks.
func redis8CoreCommands() int64 {
	var n int64
	for _, s := range cmdspec.Commands() {
		if major, _, _ := strings.Cut(s.Since, "."); major >= "8" && len(major) == 1 && !redis8ModuleGroup(s.Group) {
			n++
		}
	}
	return n
}

// redis8ModuleGroup reports whether a command group is one of Redis 8's
// module-born types (JSON, probabilistic, vector sets, arrays).
func redis8ModuleGroup(group string) bool {
	switch group {
	case "module", "bf", "cf", "cms", "topk", "tdigest", "vector_set", "array":
		return true
	}
	return false
}

// redis8ModuleCommands counts Keyhive's commands of the groups that are
// modules' in Redis 8 (JSON's, the probabilistic types'), and Redis 8.8's
// arrays, which no 7.x server has.
func redis8ModuleCommands() int64 {
	var n int64
	for _, s := range cmdspec.Commands() {
		if redis8ModuleGroup(s.Group) {
			n++
		}
	}
	return n
}
