// Command zerostat runs zerostat's demo and tools.
//
//	zerostat demo [-duration 5s] [-period 1s] [-workers 4] [-listen 127.0.0.1:0] [-export-to URL]
//	zerostat receive [-listen 127.0.0.1:4319] [-format table|json]
//	zerostat decode [-format json|table] FILE
//
// demo starts an instrumented sample HTTP service on 127.0.0.1 and a load
// generator that calls it for -duration; the service records latency,
// requests, bytes and in-flight requests by route, method and status;
// a msgpack snapshot is exported every period over HTTP to a receiver (the
// demo's own unless -export-to names one) that prints it as a table; the
// demo ends with a summary that checks the totals received against the
// requests the load generator made.
//
// receive accepts snapshots over HTTP and prints each one; decode prints a
// payload file or a stream of frames (exporter.WriterSink) as JSON or tables.
//
// Exit codes, for every command: 0 on success and after -h (help goes to
// standard output), 2 for bad usage (an unknown flag, a bad value, a
// malformed URL; the message goes to standard error), 1 when the work
// itself fails (a file that cannot be read or decoded, an export that
// failed, totals that do not match).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage: zerostat <command> [flags]

commands:
  demo     record a simulated workload, export it each period, print it
  receive  accept snapshots over HTTP and print them
  decode   print a payload file or a frame stream as JSON or tables

Run 'zerostat <command> -h' for a command's flags.
`

// run executes a command and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "demo":
		return runDemo(ctx, args[1:], stdout, stderr)
	case "receive":
		return runReceive(ctx, args[1:], stdout, stderr)
	case "decode":
		return runDecode(args[1:], os.Stdin, stdout, stderr)
	case "help", "-h", "-help", "--help":
		if len(args) == 2 && args[0] == "help" { // zerostat help demo
			return run(ctx, []string{args[1], "-h"}, stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "zerostat: unknown command %q\n\n%s", args[0], usage)
	return 2
}

// newFlags returns the flag set of command name; its usage message starts
// with "usage: zerostat " + synopsis and the about text.
func newFlags(name, synopsis, about string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: zerostat %s\n\n%s\n\nflags:\n", synopsis, about)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args. When it returns ok false the command is done and
// must exit with code: 0 after -h or -help (the usage on stdout), 2 after
// a bad flag (the error and the usage on stderr).
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	var msg bytes.Buffer
	fs.SetOutput(&msg)
	err := fs.Parse(args)
	fs.SetOutput(stderr)
	switch {
	case err == nil:
		return 0, true
	case errors.Is(err, flag.ErrHelp):
		_, _ = stdout.Write(msg.Bytes())
		return 0, false
	}
	_, _ = stderr.Write(msg.Bytes())
	return 2, false
}

// usageError prints "zerostat <command>: <message>" and a pointer to -h on
// stderr, and returns the exit code of bad usage, 2.
func usageError(fs *flag.FlagSet, stderr io.Writer, format string, args ...any) int {
	fmt.Fprintf(stderr, "zerostat %s: %s\nRun 'zerostat %s -h' for usage.\n", fs.Name(), fmt.Sprintf(format, args...), fs.Name())
	return 2
}
