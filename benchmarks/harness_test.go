package benchmarks

import (
	"debug/elf"
	"debug/gosym"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// The benchmark functions built by constructors (promCounter,
// reqZerostat, zsHandleCounter...) must be compiled as a user's code is:
// with the calls in their loops inlined. Go 1.26 does not look for calls
// to inline in a closure it created while inlining the function that
// returns it (golang/go#81380): a constructor small enough to be inlined
// into the init that builds the scenario table leaves its benchmark loop
// calling every small method (a handle's Record, b.Loop itself) through a
// call a user's loop would not make. Measured on zerostat's counter handle
// in this module: 8.48 ns against 7.43 ns for the same loop compiled with
// the call inlined, one more call level than the user's code pays. So
// every such constructor is marked //go:noinline, and this test fails
// when one is not: it reads the test binary's function table for closures
// named after a function of this package inlined into another
// (init.0.promCounter.func1), the name the compiler gives them.
func TestBenchmarkClosuresNotBuiltByInlining(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the test binary as ELF")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatalf("open the test binary: %v", err)
	}
	defer f.Close()
	// The function table (pclntab) is in every Go binary, stripped or
	// not (go test strips the ELF symbols).
	sec := f.Section(".gopclntab")
	text := f.Section(".text")
	if sec == nil || text == nil {
		t.Fatal("the test binary has no .gopclntab or .text section")
	}
	pcln, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	tab, err := gosym.NewTable(nil, gosym.NewLineTable(pcln, text.Addr))
	if err != nil {
		t.Fatalf("read the function table: %v", err)
	}
	_, self, _, _ := runtime.Caller(0)
	dir := filepath.Dir(self)
	const pkg = "github.com/zerostat/zerostat/benchmarks."
	bad := map[string]bool{}
	n := 0
	for _, fn := range tab.Funcs {
		name, ok := strings.CutPrefix(fn.Name, pkg)
		if !ok {
			continue
		}
		n++
		// outer.[N.]inlined.funcK...: the segments before the first
		// funcK (init functions are init.N). A second segment is a
		// function inlined into the first; the closure is one of this
		// package's (its code is in this directory) and not an option
		// closure of an SDK's function inlined here (ocTag.Upsert.func1).
		var path []string
		for _, sg := range strings.Split(name, ".") {
			if strings.HasPrefix(sg, "func") || strings.HasPrefix(sg, "gowrap") || strings.HasPrefix(sg, "deferwrap") {
				break
			}
			if len(path) > 0 && path[len(path)-1] == "init" && sg != "" && sg[0] >= '0' && sg[0] <= '9' {
				path[len(path)-1] += "." + sg
				continue
			}
			path = append(path, sg)
		}
		if len(path) < 2 || len(path) == len(strings.Split(name, ".")) {
			continue
		}
		if file, _, _ := tab.PCToLine(fn.Entry); filepath.Dir(file) != dir {
			continue
		}
		for _, inlined := range path[1:] {
			bad[inlined] = true
		}
	}
	if n == 0 {
		t.Fatal("no function of this package in the function table")
	}
	if len(bad) > 0 {
		var names []string
		for n := range bad {
			names = append(names, n)
		}
		sort.Strings(names)
		t.Errorf("closures built by inlining these functions, whose loops the compiler does not inline into (golang/go#81380); mark each //go:noinline: %s", strings.Join(names, ", "))
	}
}
