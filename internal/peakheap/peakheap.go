// Package peakheap measures the peak heap of a piece of work in a process
// of its own, from the Go runtime's memory statistics, for tests of a
// memory budget: a test re-runs itself as a child (Child), which does the
// work once and reports how far runtime.MemStats.HeapSys, the heap memory
// obtained from the operating system, grew; HeapSys never shrinks, so its
// growth bounds the heap's peak during the work, garbage included, which
// is what a container's memory limit meets. TotalAlloc is reported too.
package peakheap

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"testing"
)

const envChild = "ZEROSTAT_PEAKHEAP_CHILD"

// Result is a child's measurement.
type Result struct {
	HeapGrowth uint64 // HeapSys after the work minus before
	Alloc      uint64 // TotalAlloc during the work
	Output     string // the child's output
}

// MiB formats n bytes in MiB.
func MiB(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

var line = regexp.MustCompile(`peakheap: growth (\d+) alloc (\d+)`)

// Measure runs test name of this test binary in a child process with env
// (KEY=VALUE pairs) and returns what its Child reported. Skipped with
// -short: a child allocates up to a budget's worth.
func Measure(t *testing.T, name string, env ...string) Result {
	t.Helper()
	if testing.Short() {
		t.Skip("a child process allocates a memory budget's worth")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.v", "-test.count=1")
	cmd.Env = append(append(os.Environ(), envChild+"=1"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child %s: %v\n%s", name, err, out)
	}
	m := line.FindSubmatch(out)
	if m == nil {
		t.Fatalf("child %s reported nothing:\n%s", name, out)
	}
	g, _ := strconv.ParseUint(string(m[1]), 10, 64)
	a, _ := strconv.ParseUint(string(m[2]), 10, 64)
	return Result{HeapGrowth: g, Alloc: a, Output: string(out)}
}

// Child, in a test that Measure runs, runs setup (whose memory is not
// counted), then work, and reports the heap's growth during work. In a
// test run directly (not as a child) it skips the test.
func Child(t *testing.T, setup func(), work func()) {
	if os.Getenv(envChild) == "" {
		t.Skip("run by Measure")
	}
	setup()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	work()
	runtime.ReadMemStats(&after)
	fmt.Printf("peakheap: growth %d alloc %d\n", after.HeapSys-before.HeapSys, after.TotalAlloc-before.TotalAlloc)
}
