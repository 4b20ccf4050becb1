package main

import (
	"os"
	"strings"
	"testing"
)

// The streams in testdata are go test -json runs of small packages of a
// module example.com/rec, recorded with go1.26:
//
//	pass.json           ./pass ./skips ./notests: tests that pass (one logs), a
//	                    parallel table, a t.Skip, a package without tests
//	subtest-fail.json   ./fail: TestSubtests/bad prints server-like log lines,
//	                    then t.Errorf (two lines) and t.Fatal; TestFatal fails
//	panic.json          ./panics: TestPanics writes to a nil map
//	timeout.json        -timeout 2s ./timeout: TestHangs/inner sleeps a minute
//	build-fail.json     ./buildfail: a test file names an undefined identifier
//	vet-fail.json       ./vetfail: a Printf vet rejects
//	testmain-exit.json  ./mainexit: TestMain prints a line and exits 3
//	race.json           -race ./race: two goroutines increment one int
func run(t *testing.T, files ...string) (out, log string, r *report) {
	t.Helper()
	var outText, logText strings.Builder
	r = newReport(&outText, &logText, "/tmp/keyhive-test.log", "example.com/rec")
	for _, name := range files {
		f, err := os.Open("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.read(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	// go test exits with 1 when anything failed.
	exit := 0
	if r.anyFailure() {
		exit = 1
	}
	r.summarize(exit)
	return outText.String(), logText.String(), r
}

func contains(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q; output:\n%s", w, out)
		}
	}
}

func lacks(t *testing.T, out string, unwanted ...string) {
	t.Helper()
	for _, u := range unwanted {
		if strings.Contains(out, u) {
			t.Errorf("output has %q; output:\n%s", u, out)
		}
	}
}

func TestPassingRunPrintsPackagesAndCounts(t *testing.T) {
	out, log, r := run(t, "pass.json")
	if r.anyFailure() {
		t.Error("a passing run reported a failure")
	}
	contains(t, out,
		"ok    pass ", "ok    skips ", "?     notests                      [no test files]",
		"packages: 2 ok, 0 FAIL, 1 without tests\n",
		"tests:    5 run: 4 passed, 0 failed, 1 skipped",
		"full output: /tmp/keyhive-test.log\n")
	// A passing test's output goes to the log only.
	lacks(t, out, "a log line of a passing test", "=== RUN", "FAIL ")
	contains(t, log, "a log line of a passing test", "--- SKIP: TestSkipped")
}

func TestSubtestFailureShowsItsOutputAndMessage(t *testing.T) {
	out, _, r := run(t, "subtest-fail.json")
	if !r.anyFailure() {
		t.Error("no failure reported")
	}
	// The failed subtest's output, server log lines included, is printed
	// once, as it happened.
	if n := strings.Count(out, "server log line 3"); n != 1 {
		t.Errorf("the failed subtest's log line printed %d times; output:\n%s", n, out)
	}
	contains(t, out,
		"=== output of fail TestSubtests/bad\n",
		"FAIL  fail ",
		"tests:    3 run: 1 passed, 2 failed, 0 skipped",
		"FAIL fail TestSubtests/bad (0.0s)\n"+
			"      fail_test.go:17: GET k: got \"a\", want \"b\"\n"+
			"          second line of the message\n"+
			"      fail_test.go:18: stopped\n",
		"FAIL fail TestFatal (0.0s)\n      fail_test.go:24: fast subscriber got 830575098 bytes, want 1074413568\n")
	// The parent fails only through its subtest: not a failure of its own.
	lacks(t, out, "FAIL fail TestSubtests (")
}

func TestPanicNamesTheTestAndThePanic(t *testing.T) {
	out, _, _ := run(t, "panic.json")
	contains(t, out,
		"goroutine ", // the stack, in the test's printed output
		"FAIL panics TestPanics (0.0s)\n      panic: assignment to entry in nil map [recovered, repanicked]\nfull output:",
		"tests:    2 run: 1 passed, 1 failed, 0 skipped")
	lacks(t, out, "(outside its tests)")
}

func TestTimeoutNamesTheTestsThatDidNotFinish(t *testing.T) {
	out, _, _ := run(t, "timeout.json")
	contains(t, out,
		"FAIL timeout TestHangs/inner (did not finish)\n      panic: test timed out after 2s\n      running tests:\n      TestHangs (2s)\n      TestHangs/inner (2s)\n",
		"FAIL  timeout ",
		"tests:    2 run: 1 passed, 1 failed, 0 skipped")
}

func TestBuildAndVetFailures(t *testing.T) {
	out, _, r := run(t, "build-fail.json", "vet-fail.json")
	if r.pkgFailed != 2 {
		t.Errorf("%d packages failed, want 2", r.pkgFailed)
	}
	contains(t, out,
		"FAIL  buildfail                    [build failed]\n",
		"FAIL buildfail [build failed]\n      buildfail/b_test.go:6:17: undefined: undefinedThing\n",
		"FAIL vetfail [build failed]\n      vetfail/v_test.go:8:45: fmt.Printf format %d has arg \"not a number\" of wrong type string\n")
}

func TestPackageFailingOutsideItsTests(t *testing.T) {
	out, _, r := run(t, "testmain-exit.json")
	if !r.anyFailure() {
		t.Error("no failure reported")
	}
	contains(t, out, "FAIL mainexit (outside its tests)\n      TestMain: cannot start the oracle\n")
}

func TestDataRaceShowsWhere(t *testing.T) {
	out, _, _ := run(t, "race.json")
	contains(t, out, "FAIL race TestRacy (0.0s)\n      WARNING: DATA RACE\n      Read at ")
}

func TestLongOutputIsCut(t *testing.T) {
	var out strings.Builder
	r := newReport(&out, &strings.Builder{}, "/tmp/keyhive-test.log", "")
	var lines []string
	for i := range 1000 {
		lines = append(lines, "log line "+strings.Repeat("x", i%3))
	}
	r.printLines("output of server TestLong", lines)
	if got := strings.Count(out.String(), "\n"); got != printedLines+2 {
		t.Errorf("%d lines printed, want %d", got, printedLines+2)
	}
	contains(t, out.String(), "... 700 lines left out here, all in /tmp/keyhive-test.log\n")
}

func TestGoTestErrorOutsideTheStream(t *testing.T) {
	var out strings.Builder
	r := newReport(&out, &strings.Builder{}, "/tmp/keyhive-test.log", "")
	if err := r.read(strings.NewReader("go: unknown flag -shrot\n")); err != nil {
		t.Fatal(err)
	}
	r.summarize(2)
	contains(t, out.String(), "go: unknown flag -shrot\n", "FAIL go test exited with status 2 (its error is above)\n")
}
