package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("benchgate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rulesPath := fs.String("rules", "", "rules file (required)")
	baseline := fs.String("baseline", "", "baseline benchmark output, for regress rules")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *rulesPath == "" || fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: benchgate -rules FILE [-baseline OLD] NEW...\n"+
			"checks go test -bench output (NEW, and OLD for regress rules) against the rules in FILE;\n"+
			"the rules syntax, and running it on any project: go doc ./cmd/benchgate in zerostat's benchmarks/")
		return 2
	}
	rf, err := os.Open(*rulesPath)
	if err != nil {
		fmt.Fprintln(stderr, "benchgate:", err)
		return 2
	}
	rules, err := ParseRules(rf)
	rf.Close()
	if err != nil {
		fmt.Fprintln(stderr, "benchgate:", err)
		return 2
	}
	cur := Samples{}
	for _, p := range fs.Args() {
		if err := readFile(p, cur); err != nil {
			fmt.Fprintln(stderr, "benchgate:", err)
			return 2
		}
	}
	var base Samples
	if *baseline != "" {
		base = Samples{}
		if err := readFile(*baseline, base); err != nil {
			fmt.Fprintln(stderr, "benchgate:", err)
			return 2
		}
	}
	fails := Report(stdout, Evaluate(rules, cur, base))
	if fails > 0 {
		fmt.Fprintf(stdout, "benchgate: %d rule(s) broken\n", fails)
		return 1
	}
	fmt.Fprintln(stdout, "benchgate: all rules hold")
	return 0
}

func readFile(path string, into Samples) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return ReadResults(f, path, into)
}

type table struct{ tw *tabwriter.Writer }

func newTable(w io.Writer) *table { return &table{tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)} }

func (t *table) row(cols ...string) {
	for i, c := range cols {
		if i > 0 {
			fmt.Fprint(t.tw, "\t")
		}
		fmt.Fprint(t.tw, c)
	}
	fmt.Fprintln(t.tw)
}

func (t *table) flush() { t.tw.Flush() }
