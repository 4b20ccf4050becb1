package difftest

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// OracleEnv names the environment variable that picks the oracle of Start
// and StartIsolated: "7.0" (or unset) for Debian's redis-server 7.0.15, "7.4"
// for redis-server 7.4.1. Running the whole suite with KEYHIVE_DIFF_ORACLE=7.4
// lists where Keyhive still behaves as 7.0 and not as the 7.4.1 it reports.
const OracleEnv = "KEYHIVE_DIFF_ORACLE"

// defaultOracle is the oracle binary OracleEnv picks; "" is the one on PATH.
func defaultOracle(tb testing.TB) string {
	tb.Helper()
	switch v := os.Getenv(OracleEnv); v {
	case "", "7.0":
		return ""
	case "7.4":
		path, err := Oracle74()
		if err != nil {
			tb.Fatal(err)
		}
		return path
	default:
		tb.Fatalf("%s=%q: want 7.0 or 7.4", OracleEnv, v)
		return ""
	}
}

// Oracle74Env names the environment variable holding the path of a
// redis-server 7.4.1 binary. test.sh sets it after building the binary with
// build-oracle.sh (beside this file).
const Oracle74Env = "KEYHIVE_ORACLE_74"

// Oracle74 returns the path of the redis-server 7.4.1 oracle: Oracle74Env if
// set, else where build-oracle.sh caches its build. The binary is built once
// per machine (about two minutes), so tests never build it themselves.
func Oracle74() (string, error) {
	path := os.Getenv(Oracle74Env)
	if path == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", err
			}
			cache = filepath.Join(home, ".cache")
		}
		path = filepath.Join(cache, "keyhive-oracles", "redis-7.4.1", "src", "redis-server")
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("redis-server 7.4.1 oracle not found at %s: ./test.sh builds it when its source can be had (internal/difftest/build-oracle.sh)", path)
	}
	return path, nil
}

// Need74 returns the path of the redis-server 7.4.1 oracle, or skips tb
// with one line saying why there is none (a fresh clone without the source
// and offline). A binary Oracle74Env names but that is missing fails tb
// instead: test.sh sets it only after a build, so the oracle's tests never
// skip where it was built.
func Need74(tb testing.TB) string {
	tb.Helper()
	path, err := Oracle74()
	switch {
	case err == nil:
		return path
	case os.Getenv(Oracle74Env) != "":
		tb.Fatalf("%s: %v", Oracle74Env, err)
	default:
		tb.Skip(err)
	}
	return ""
}
