// Command testreport runs go test and makes its result readable: one line per
// package as it finishes, the output of failed tests only (with the server
// logs they printed), and a summary at the end that counts packages and tests
// and gives every failure with the first lines of its message. Everything go
// test printed, passing tests' output included, goes to a log file the
// summary names, so nothing is lost.
//
// Usage (test.sh runs it):
//
//	go run ./internal/testreport [-log file] [go test flags] [packages]
//
// It runs go test -json with the flags and packages given and exits with 1
// when go test failed (a test, a build, vet), 0 otherwise. Without -log the
// log is a new file in $TMPDIR.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
)

func main() {
	args := os.Args[1:]
	logPath := ""
	if len(args) >= 2 && args[0] == "-log" {
		logPath, args = args[1], args[2:]
	}
	var log *os.File
	var err error
	if logPath == "" {
		log, err = os.CreateTemp("", "keyhive-test-*.log")
	} else {
		log, err = os.Create(logPath)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	defer log.Close()

	module, _ := exec.Command("go", "list", "-m").Output()
	r := newReport(os.Stdout, log, log.Name(), strings.TrimSpace(string(module)))

	// go test's own errors (bad flags, packages it cannot load) come on
	// stderr, not as JSON: they join the stream as lines of no package.
	cmd := exec.Command("go", append([]string{"test", "-json"}, args...)...)
	stream, writer, err := os.Pipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	cmd.Stdout, cmd.Stderr = writer, writer
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	writer.Close()
	// Ctrl-C stops go test, which ends the stream; the summary of what
	// ran until then is still printed.
	signal.Notify(make(chan os.Signal, 1), os.Interrupt)
	r.read(stream)
	exitCode := 0
	if err := cmd.Wait(); err != nil {
		exitCode = 1
		if exit, ok := err.(*exec.ExitError); ok && exit.ExitCode() > 0 {
			exitCode = exit.ExitCode()
		}
	}
	r.summarize(exitCode)
	if exitCode != 0 || r.anyFailure() {
		os.Exit(1)
	}
}
