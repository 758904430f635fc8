// Command testsum reads `go test -json` on standard input and writes what
// a reader of a plain `go test` run wants: each package's result line,
// and the whole output of every test that failed (and of a package that
// failed to build or panicked). It counts the tests that passed, failed
// and were skipped per package, appends one line per package to the file
// named by $ZEROSTAT_SUMMARY (when set) for `make test`'s summary, and
// ends with the line "N passed, N failed, N skipped". It exits 1 when
// any test or package failed.
//
//	go test -json ./... | go run ./internal/tools/testsum STEP
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

type pkgCount struct {
	pass, fail, skip int
	failed           bool
	out              []string            // package-level output
	skipped          []string            // names of the skipped tests
	tests            map[string][]string // per test, until it ends
}

func main() {
	step := "go test"
	if len(os.Args) > 1 {
		step = os.Args[1]
	}
	pkgs := map[string]*pkgCount{}
	get := func(p string) *pkgCount {
		c := pkgs[p]
		if c == nil {
			c = &pkgCount{tests: map[string][]string{}}
			pkgs[p] = c
		}
		return c
	}
	w := bufio.NewWriter(os.Stdout)
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// Not an event (a build error printed by go itself).
			fmt.Fprintln(w, string(line))
			continue
		}
		c := get(e.Package)
		switch {
		case e.Test == "" && e.Action == "output":
			c.out = append(c.out, e.Output)
			if strings.HasPrefix(e.Output, "ok ") || strings.HasPrefix(e.Output, "FAIL") || strings.HasPrefix(e.Output, "?") ||
				strings.HasPrefix(e.Output, "panic:") || strings.HasPrefix(e.Output, "# ") {
				fmt.Fprint(w, e.Output)
			}
		case e.Test == "" && (e.Action == "skip" || e.Action == "pass"):
			// A package's own end: "skip" means it has no test files,
			// which is not a skipped test.
		case e.Test == "" && e.Action == "fail":
			c.failed = true
			for _, o := range c.out {
				if !strings.HasPrefix(o, "FAIL") {
					fmt.Fprint(w, o)
				}
			}
		case e.Action == "output":
			c.tests[e.Test] = append(c.tests[e.Test], e.Output)
		case e.Action == "pass":
			c.pass++
			delete(c.tests, e.Test)
		case e.Action == "skip":
			c.skip++
			c.skipped = append(c.skipped, e.Test)
			delete(c.tests, e.Test)
		case e.Action == "fail":
			c.fail++
			for _, o := range c.tests[e.Test] {
				fmt.Fprint(w, o)
			}
			delete(c.tests, e.Test)
		}
		w.Flush()
	}
	w.Flush()
	names := make([]string, 0, len(pkgs))
	for p := range pkgs {
		names = append(names, p)
	}
	sort.Strings(names)
	var pass, fail, skip int
	bad := false
	var sum *os.File
	if f := os.Getenv("ZEROSTAT_SUMMARY"); f != "" {
		sum, _ = os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	}
	for _, p := range names {
		c := pkgs[p]
		pass, fail, skip = pass+c.pass, fail+c.fail, skip+c.skip
		bad = bad || c.failed || c.fail > 0
		if sum != nil && p != "" {
			fmt.Fprintf(sum, "tests\t%s\t%s\t%d\t%d\t%d\t%s\n", step, p, c.pass, c.fail, c.skip, strings.Join(c.skipped, " "))
		}
	}
	if sum != nil {
		sum.Close()
	}
	fmt.Printf("%s: %d passed, %d failed, %d skipped\n", step, pass, fail, skip)
	if bad {
		os.Exit(1)
	}
}
