package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"
)

// event is one line of go test -json (cmd/test2json's TestEvent, plus the
// build events go test adds).
type event struct {
	Action      string
	Package     string
	Test        string
	Elapsed     float64
	Output      string
	ImportPath  string
	FailedBuild string
}

const (
	// printedLines caps the output printed for one failed test; a longer
	// one (a server's log) shows its head and tail, the rest is in the log.
	printedLines = 300
	headLines    = 100
	// messageLines is how much of a failure's message the summary shows.
	messageLines = 6
	slowestShown = 5
)

type report struct {
	out     io.Writer // the person reading
	log     io.Writer // everything go test printed
	logName string
	module  string // trimmed from package paths when shown

	packages map[string]*pkgRun
	builds   map[string][]string // build output by ImportPath, until it passes or fails

	pkgOK, pkgFailed, pkgNoTests int
	run, passed, failed, skipped int // top-level tests
	failures                     []failure
	slowest                      []timed
	started                      time.Time
}

type pkgRun struct {
	tests  map[string]*testRun
	output []string // lines of no test: TestMain, a crash between tests
}

type testRun struct {
	name   string
	lines  []string
	done   bool
	failed bool
}

type failure struct {
	pkg, test string
	note      string // (1.2s), [build failed], did not finish
	message   []string
}

type timed struct {
	name    string
	elapsed float64
}

func newReport(out, log io.Writer, logName, module string) *report {
	return &report{
		out: out, log: log, logName: logName, module: module,
		packages: map[string]*pkgRun{},
		builds:   map[string][]string{},
		started:  time.Now(),
	}
}

func (r *report) anyFailure() bool { return r.pkgFailed > 0 || len(r.failures) > 0 }

// read consumes a go test -json stream to its end.
func (r *report) read(in io.Reader) error {
	scanner := bufio.NewScanner(in)
	scanner.Buffer(make([]byte, 64<<10), 64<<20)
	for scanner.Scan() {
		line := scanner.Text()
		var e event
		if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &e) != nil {
			// Not an event: go test's own error on stderr.
			fmt.Fprintln(r.out, line)
			fmt.Fprintln(r.log, line)
			continue
		}
		r.handle(e)
	}
	return scanner.Err()
}

func (r *report) handle(e event) {
	if e.Output != "" {
		io.WriteString(r.log, e.Output)
	}
	switch e.Action {
	case "build-output":
		r.builds[e.ImportPath] = append(r.builds[e.ImportPath], strings.TrimSuffix(e.Output, "\n"))
		return
	case "build-fail":
		fmt.Fprintln(r.out, strings.Join(r.builds[e.ImportPath], "\n"))
		return
	}
	if e.Package == "" {
		return
	}
	p := r.packages[e.Package]
	if p == nil {
		p = &pkgRun{tests: map[string]*testRun{}}
		r.packages[e.Package] = p
	}
	if e.Test == "" {
		r.packageEvent(e, p)
		return
	}
	t := p.tests[e.Test]
	if t == nil {
		t = &testRun{name: e.Test}
		p.tests[e.Test] = t
	}
	topLevel := !strings.Contains(e.Test, "/")
	switch e.Action {
	case "run":
		if topLevel {
			r.run++
		}
	case "output":
		t.lines = append(t.lines, strings.TrimSuffix(e.Output, "\n"))
	case "pass", "skip":
		t.done, t.lines = true, nil
		if topLevel {
			if e.Action == "pass" {
				r.passed++
			} else {
				r.skipped++
			}
			r.timed(e)
		}
	case "fail":
		t.done, t.failed = true, true
		if topLevel {
			r.failed++
			r.timed(e)
		}
		if hasOwnOutput(t) {
			r.printTest(e.Package, t)
		}
		if !hasFailedChild(p, t) {
			r.failures = append(r.failures, failure{
				pkg: e.Package, test: e.Test,
				note:    fmt.Sprintf("(%s)", seconds(e.Elapsed)),
				message: message(t.lines),
			})
		}
		t.lines = nil
	}
}

func (r *report) packageEvent(e event, p *pkgRun) {
	switch e.Action {
	case "output":
		line := strings.TrimSuffix(e.Output, "\n")
		// go test's own verdict lines repeat what the package line says.
		if line != "PASS" && line != "FAIL" && !strings.HasPrefix(line, "ok  \t") &&
			!strings.HasPrefix(line, "FAIL\t") && !strings.HasPrefix(line, "?   \t") {
			p.output = append(p.output, line)
		}
	case "pass":
		r.pkgOK++
		fmt.Fprintf(r.out, "ok    %-28s %s\n", r.short(e.Package), seconds(e.Elapsed))
	case "skip":
		r.pkgNoTests++
		fmt.Fprintf(r.out, "?     %-28s [no test files]\n", r.short(e.Package))
	case "fail":
		r.pkgFailed++
		r.packageFailed(e, p)
		note := seconds(e.Elapsed)
		if e.FailedBuild != "" {
			note = "[build failed]"
		}
		fmt.Fprintf(r.out, "FAIL  %-28s %s\n", r.short(e.Package), note)
	}
	if e.Action != "output" {
		delete(r.packages, e.Package)
	}
}

// packageFailed records why a package failed beyond its failed tests: a
// build that failed, tests a crash or the timeout cut short, output of no
// test (TestMain, a goroutine's panic between tests).
func (r *report) packageFailed(e event, p *pkgRun) {
	if e.FailedBuild != "" {
		var message []string
		for _, line := range r.builds[e.FailedBuild] {
			if !strings.HasPrefix(line, "# ") {
				message = append(message, line)
			}
		}
		r.failures = append(r.failures, failure{pkg: e.Package, note: "[build failed]", message: first(message, messageLines)})
		return
	}
	var unfinished []*testRun
	for _, t := range p.tests {
		if !t.done {
			unfinished = append(unfinished, t)
			if !strings.Contains(t.name, "/") {
				r.failed++
			}
		}
	}
	slices.SortFunc(unfinished, func(a, b *testRun) int { return strings.Compare(a.name, b.name) })
	var silent []string
	for _, t := range unfinished {
		if hasOwnOutput(t) {
			r.printTest(e.Package, t)
		}
		if hasUnfinishedChild(p, t) {
			continue
		}
		if m := message(t.lines); len(m) > 0 {
			r.failures = append(r.failures, failure{pkg: e.Package, test: t.name, note: "(did not finish)", message: m})
		} else {
			silent = append(silent, t.name)
		}
	}
	if len(silent) > 0 {
		r.failures = append(r.failures, failure{pkg: e.Package, note: "did not finish: " + strings.Join(silent, ", ")})
	}
	if len(p.output) > 0 {
		r.printLines("output of "+r.short(e.Package)+" outside its tests", p.output)
	}
	failedTests := slices.ContainsFunc(r.failures, func(f failure) bool { return f.pkg == e.Package })
	if len(p.output) > 0 || !failedTests {
		r.failures = append(r.failures, failure{pkg: e.Package, note: "(outside its tests)", message: lastLines(p.output, messageLines)})
	}
}

func (r *report) timed(e event) {
	r.slowest = append(r.slowest, timed{r.short(e.Package) + " " + e.Test, e.Elapsed})
	slices.SortFunc(r.slowest, func(a, b timed) int {
		switch {
		case a.elapsed > b.elapsed:
			return -1
		case a.elapsed < b.elapsed:
			return 1
		}
		return 0
	})
	if len(r.slowest) > slowestShown {
		r.slowest = r.slowest[:slowestShown]
	}
}

func hasFailedChild(p *pkgRun, t *testRun) bool {
	for name, c := range p.tests {
		if c.failed && strings.HasPrefix(name, t.name+"/") {
			return true
		}
	}
	return false
}

func hasUnfinishedChild(p *pkgRun, t *testRun) bool {
	for name, c := range p.tests {
		if !c.done && strings.HasPrefix(name, t.name+"/") {
			return true
		}
	}
	return false
}

// hasOwnOutput says whether a test printed more than testing's markers (a
// parent test failing because a subtest did prints none).
func hasOwnOutput(t *testRun) bool {
	for _, line := range t.lines {
		if !isMarker(line) {
			return true
		}
	}
	return false
}

func isMarker(line string) bool {
	for _, prefix := range []string{"=== RUN", "=== PAUSE", "=== CONT", "=== NAME", "--- FAIL:", "--- PASS:", "--- SKIP:"} {
		if strings.HasPrefix(strings.TrimLeft(line, " "), prefix) {
			return true
		}
	}
	return false
}

func (r *report) printTest(pkg string, t *testRun) {
	r.printLines("output of "+r.short(pkg)+" "+t.name, t.lines)
}

func (r *report) printLines(header string, lines []string) {
	fmt.Fprintf(r.out, "=== %s\n", header)
	if len(lines) > printedLines {
		tail := printedLines - headLines
		fmt.Fprintln(r.out, strings.Join(lines[:headLines], "\n"))
		fmt.Fprintf(r.out, "... %d lines left out here, all in %s\n", len(lines)-printedLines, r.logName)
		lines = lines[len(lines)-tail:]
	}
	fmt.Fprintln(r.out, strings.Join(lines, "\n"))
}

// testingLine is a line testing prints for t.Error, t.Fatal or t.Log:
// four spaces, file:line, the message; continuation lines have eight.
var testingLine = regexp.MustCompile(`^    [^ ]+\.go:\d+: `)

// message picks a failed test's message out of its output: a panic (the
// timeout is one) with the tests it names, a data race with where it
// happened, else what the test reported with t.Error, t.Fatal and t.Log.
func message(lines []string) []string {
	for i, line := range lines {
		if strings.HasPrefix(line, "panic: ") {
			var m []string
			for _, l := range lines[i:] {
				if strings.HasPrefix(l, "goroutine ") {
					break
				}
				if strings.TrimSpace(l) != "" {
					m = append(m, strings.TrimSpace(l))
				}
			}
			return first(m, messageLines)
		}
	}
	for i, line := range lines {
		if line == "WARNING: DATA RACE" {
			return first(lines[i:], 4)
		}
	}
	var m []string
	inMessage := false
	for _, line := range lines {
		switch {
		case testingLine.MatchString(line):
			inMessage = true
			m = append(m, strings.TrimPrefix(line, "    "))
		case inMessage && strings.HasPrefix(line, "        "):
			m = append(m, strings.TrimPrefix(line, "    "))
		default:
			inMessage = false
		}
		if len(m) == messageLines {
			break
		}
	}
	if len(m) > 0 {
		return m
	}
	var rest []string
	for _, line := range lines {
		if !isMarker(line) && strings.TrimSpace(line) != "" {
			rest = append(rest, line)
		}
	}
	return lastLines(rest, messageLines)
}

func (r *report) summarize(goTestExit int) {
	fmt.Fprintf(r.out, "\n=== summary (%s)\n", time.Since(r.started).Round(time.Second))
	fmt.Fprintf(r.out, "packages: %d ok, %d FAIL, %d without tests\n", r.pkgOK, r.pkgFailed, r.pkgNoTests)
	fmt.Fprintf(r.out, "tests:    %d run: %d passed, %d failed, %d skipped (a test's subtests count in it)\n",
		r.run, r.passed, r.failed, r.skipped)
	r.slowest = slices.DeleteFunc(r.slowest, func(t timed) bool { return t.elapsed < 1 })
	if len(r.slowest) > 0 {
		var names []string
		for _, s := range r.slowest {
			names = append(names, fmt.Sprintf("%s %s", s.name, seconds(s.elapsed)))
		}
		fmt.Fprintf(r.out, "slowest:  %s\n", strings.Join(names, ", "))
	}
	for _, f := range r.failures {
		fmt.Fprintf(r.out, "FAIL %s\n", strings.Join(nonEmpty(r.short(f.pkg), f.test, f.note), " "))
		for _, line := range f.message {
			fmt.Fprintf(r.out, "      %s\n", line)
		}
	}
	if goTestExit != 0 && !r.anyFailure() {
		fmt.Fprintf(r.out, "FAIL go test exited with status %d (its error is above)\n", goTestExit)
	}
	fmt.Fprintf(r.out, "full output: %s\n", r.logName)
}

func (r *report) short(pkg string) string {
	if r.module == "" || pkg == r.module {
		return pkg
	}
	return strings.TrimPrefix(pkg, r.module+"/")
}

func seconds(s float64) string { return fmt.Sprintf("%.1fs", s) }

func first(lines []string, n int) []string { return lines[:min(n, len(lines))] }

func lastLines(lines []string, n int) []string { return lines[max(0, len(lines)-n):] }

func nonEmpty(parts ...string) []string {
	return slices.DeleteFunc(parts, func(s string) bool { return s == "" })
}
