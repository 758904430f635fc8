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
