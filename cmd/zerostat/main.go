// Command zerostat runs zerostat's demo and tools.
//
//	zerostat demo [-duration 5s] [-period 1s] [-workers 2] [-export-to URL]
//	zerostat receive [-listen 127.0.0.1:4319] [-format table|json]
//	zerostat decode [-format json|table] FILE
//
// demo registers views over a simulated HTTP service's requests, records
// from several goroutines for -duration, exports a msgpack snapshot every
// period over HTTP to a receiver (in-process unless -export-to names one)
// that prints it as a table, and ends with a summary that checks the totals
// received against what the load generator recorded.
//
// receive accepts snapshots over HTTP and prints each one; decode prints a
// payload file or a stream of frames (exporter.WriterSink) as JSON.
package main

import (
	"context"
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
  decode   print a payload file or a frame stream as JSON
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
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "zerostat: unknown command %q\n\n%s", args[0], usage)
	return 2
}
