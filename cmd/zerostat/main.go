// Command zerostat runs zerostat's demo and tools.
//
//	zerostat demo [-duration 5s] [-period 1s] [-workers 2]
//
// demo registers views over a simulated HTTP service's requests, records
// from several goroutines for -duration, prints the views as a table every
// reporting period, and ends with a summary that checks the aggregated
// totals against what the load generator recorded.
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
  demo    record a simulated workload and print the views each period
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
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "zerostat: unknown command %q\n\n%s", args[0], usage)
	return 2
}
