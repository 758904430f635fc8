package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bench renders go test -bench lines: one per value.
func bench(name string, unit string, vals ...float64) string {
	var b strings.Builder
	for _, v := range vals {
		fmt.Fprintf(&b, "Benchmark%s-2 \t 1000000\t %g %s\t 0 B/op\t 0 allocs/op\n", name, v, unit)
	}
	return b.String()
}

const header = "goos: linux\ngoarch: amd64\npkg: example.com/x\n"

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func runGate(t *testing.T, rules, results, baseline string) (int, string) {
	t.Helper()
	dir := t.TempDir()
	args := []string{"-rules", write(t, dir, "rules", rules)}
	if baseline != "" {
		args = append(args, "-baseline", write(t, dir, "base.txt", header+baseline))
	}
	args = append(args, write(t, dir, "new.txt", header+results))
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String() + errOut.String()
}

func TestAllocBudget(t *testing.T) {
	rules := "alloc Record/*/impl=zerostat allocs/op <= 0\n"
	ok := header + "BenchmarkRecord/s=a/impl=zerostat-2 1000 20 ns/op 0 B/op 0 allocs/op\n" +
		"BenchmarkRecord/s=a/impl=opencensus-2 1000 500 ns/op 96 B/op 2 allocs/op\n"
	if code, out := runGate(t, rules, ok, ""); code != 0 {
		t.Errorf("a zero-alloc run failed the gate (%d):\n%s", code, out)
	}
	bad := ok + "BenchmarkRecord/s=b/impl=zerostat-2 1000 25 ns/op 16 B/op 1 allocs/op\n"
	code, out := runGate(t, rules, bad, "")
	if code != 1 || !strings.Contains(out, "line 1: alloc Record/*/impl=zerostat allocs/op <= 0") ||
		!strings.Contains(out, "Record/s=b/impl=zerostat") || !strings.Contains(out, "FAIL: allocs/op 1 > 0") {
		t.Errorf("an allocation passed the gate or was not named (%d):\n%s", code, out)
	}
}

func TestRatioBounds(t *testing.T) {
	rules := "ratio Record/c2/impl=zerostat ns/op <= 3 x Record/c2/impl=floor\n" +
		"ratio Record/c2/impl=opencensus ns/op >= 10 x Record/c2/impl=zerostat\n"
	floor := bench("Record/c2/impl=floor", "ns/op", 8.5, 8.6, 8.4, 8.7, 8.5, 8.6)
	oc := bench("Record/c2/impl=opencensus", "ns/op", 550, 560, 540, 600, 555, 570)
	fast := bench("Record/c2/impl=zerostat", "ns/op", 20, 21, 19, 22, 20, 21)
	if code, out := runGate(t, rules, floor+oc+fast, ""); code != 0 {
		t.Errorf("within bounds but failed (%d):\n%s", code, out)
	}
	// Clearly over 3x the floor: fails, naming the rule.
	slow := bench("Record/c2/impl=zerostat", "ns/op", 40, 41, 39, 42, 40, 41)
	code, out := runGate(t, rules, floor+oc+slow, "")
	if code != 1 || !strings.Contains(out, "line 1: ratio Record/c2/impl=zerostat ns/op <= 3 x Record/c2/impl=floor") ||
		!strings.Contains(out, "beyond the confidence interval") {
		t.Errorf("a 4.7x ratio passed (%d):\n%s", code, out)
	}
	// OpenCensus no longer 10x slower.
	ocFast := bench("Record/c2/impl=opencensus", "ns/op", 100, 110, 105, 100, 108, 102)
	if code, out := runGate(t, rules, floor+ocFast+fast, ""); code != 1 || !strings.Contains(out, "line 2:") {
		t.Errorf(">= rule did not fail (%d):\n%s", code, out)
	}
	// Median just over the bound, but the noise straddles it: warned, not failed.
	noisy := bench("Record/c2/impl=zerostat", "ns/op", 22, 30, 24, 28, 27, 29)
	code, out = runGate(t, rules, floor+oc+noisy, "")
	if code != 0 || !strings.Contains(out, "~: median ratio") {
		t.Errorf("noise within the interval failed the gate (%d):\n%s", code, out)
	}
}

func TestRegression(t *testing.T) {
	rules := "regress Record/*/impl=zerostat ns/op +20%\n"
	base := bench("Record/c2/impl=zerostat", "ns/op", 20, 21, 19, 22, 20, 21)
	same := bench("Record/c2/impl=zerostat", "ns/op", 21, 20, 20, 22, 19, 21)
	if code, out := runGate(t, rules, same, base); code != 0 {
		t.Errorf("no change failed (%d):\n%s", code, out)
	}
	slower := bench("Record/c2/impl=zerostat", "ns/op", 30, 31, 29, 32, 30, 31)
	code, out := runGate(t, rules, slower, base)
	if code != 1 || !strings.Contains(out, "slower (p=0.002 < 0.05), over the +20% allowed") {
		t.Errorf("a 50%% slowdown passed (%d):\n%s", code, out)
	}
	// Slower by 10%: significant but under the threshold.
	bit := bench("Record/c2/impl=zerostat", "ns/op", 22, 23, 22, 23, 22, 23)
	if code, out := runGate(t, rules, bit, base); code != 0 {
		t.Errorf("a 10%% slowdown under a 20%% threshold failed (%d):\n%s", code, out)
	}
	// No baseline: skipped with a note, not failed.
	if code, out := runGate(t, rules, same, ""); code != 0 || !strings.Contains(out, "no baseline") {
		t.Errorf("without baseline (%d):\n%s", code, out)
	}
}

func TestRenamedBenchmarkFailsItsRule(t *testing.T) {
	rules := "alloc Record/*/impl=zerostat allocs/op <= 0\n"
	code, out := runGate(t, rules, bench("Something/else", "ns/op", 1), "")
	if code != 1 || !strings.Contains(out, "no benchmark matches Record/*/impl=zerostat") {
		t.Errorf("a rule matching nothing passed (%d):\n%s", code, out)
	}
}

func TestBadRules(t *testing.T) {
	for _, rules := range []string{
		"alloc X allocs/op < 0\n",
		"ratio A ns/op <= 3 B\n",
		"regress A ns/op 20%\n",
		"speed A ns/op fast\n",
		"alloc X allocs/op <= -1\n",
	} {
		code, out := runGate(t, rules, bench("A", "ns/op", 1), "")
		if code != 2 || !strings.Contains(out, "rules line 1") {
			t.Errorf("%q: exit %d, %s; want 2 naming the line", rules, code, out)
		}
	}
	var out, errOut bytes.Buffer
	if code := run(nil, &out, &errOut); code != 2 {
		t.Errorf("no arguments: exit %d", code)
	}
}

// TestRulesFileParses keeps the committed rules file valid.
func TestRulesFileParses(t *testing.T) {
	f, err := os.Open("../../gate.rules")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rules, err := ParseRules(f)
	if err != nil || len(rules) == 0 {
		t.Fatalf("gate.rules: %d rules, %v", len(rules), err)
	}
}
