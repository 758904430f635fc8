package runmetrics_test

import (
	"runtime"
	"testing"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/internal/race"
	"github.com/zerostat/zerostat/metric"
	"github.com/zerostat/zerostat/plugin/runmetrics"
)

var tinySink []*[8]byte

// TestMallocsAndFreesCountTinyAllocs checks go_memstats_mallocs and
// go_memstats_frees against client_golang's go_memstats_mallocs_total and
// go_memstats_frees_total, runtime.MemStats' Mallocs and Frees, which
// (client_golang v1.25.0 go_collector_latest.go memStatsFromRM) are
// /gc/heap/allocs:objects and /gc/heap/frees:objects each plus
// /gc/heap/tiny/allocs:objects: each value lies between those sums read
// just before and just after the snapshot. The tiny allocations made
// first outnumber the allocations the snapshot itself makes, so a value
// without them falls below that range.
func TestMallocsAndFreesCountTinyAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector turns the tiny allocator off: no tiny allocation to count")
	}
	if err := runmetrics.Enable(runmetrics.Options{NoProcess: true}); err != nil {
		t.Fatal(err)
	}
	defer runmetrics.Disable()
	for i := 0; i < 10000; i++ { // tiny (pointer-free, under 16 B) allocations
		b := new([8]byte)
		if i%1000 == 0 {
			tinySink = append(tinySink, b)
		}
	}
	runtime.GC() // flushes the per-P tiny allocation counts
	names := []string{"/gc/heap/allocs:objects", "/gc/heap/frees:objects", "/gc/heap/tiny/allocs:objects"}
	before := read(names...)
	metric.Collect()
	after := read(names...)
	allocs0, frees0, tiny0 := before[0].Value.Uint64(), before[1].Value.Uint64(), before[2].Value.Uint64()
	allocs1, frees1, tiny1 := after[0].Value.Uint64(), after[1].Value.Uint64(), after[2].Value.Uint64()
	if tiny0 <= allocs1-allocs0 || tiny0 <= frees1-frees0 {
		t.Fatalf("%d tiny allocations, not more than the %d allocations and %d frees during the snapshot: cannot tell them apart",
			tiny0, allocs1-allocs0, frees1-frees0)
	}
	if v, lo, hi := value(t, "go_memstats_mallocs"), float64(allocs0+tiny0), float64(allocs1+tiny1); v < lo || v > hi {
		t.Errorf("go_memstats_mallocs = %v; want /gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects, in [%v, %v] (allocs alone: [%v, %v])",
			v, lo, hi, allocs0, allocs1)
	}
	if v, lo, hi := value(t, "go_memstats_frees"), float64(frees0+tiny0), float64(frees1+tiny1); v < lo || v > hi {
		t.Errorf("go_memstats_frees = %v; want /gc/heap/frees:objects + /gc/heap/tiny/allocs:objects, in [%v, %v] (frees alone: [%v, %v])",
			v, lo, hi, frees0, frees1)
	}
}

// TestThreadsAsClientGolang checks go_threads against client_golang
// v1.25.0's (getRuntimeNumThreads): the count runtime.ThreadCreateProfile
// returns, read just before and just after the snapshot. In a cgo
// build (as go test's default where a C compiler is found) that count
// exceeds the runtime's live threads, /sched/threads/total:threads, by
// the thread kept for cgo callbacks, so that source fails this test.
func TestThreadsAsClientGolang(t *testing.T) {
	if err := runmetrics.Enable(runmetrics.Options{NoProcess: true}); err != nil {
		t.Fatal(err)
	}
	defer runmetrics.Disable()
	lo, _ := runtime.ThreadCreateProfile(nil)
	metric.Collect()
	hi, _ := runtime.ThreadCreateProfile(nil)
	live := read("/sched/threads/total:threads")[0].Value.Uint64()
	t.Logf("ThreadCreateProfile %d..%d, /sched/threads/total %d", lo, hi, live)
	if v := value(t, "go_threads"); v < float64(lo) || v > float64(hi) {
		t.Errorf("go_threads = %v; want runtime.ThreadCreateProfile's count, in [%d, %d]", v, lo, hi)
	}
}

// TestGoroutinesAsClientGolang: go_goroutines is runtime.NumGoroutine(),
// as client_golang's is, read within the snapshot: between the counts
// just before and just after it, plus the goroutines the snapshot runs
// its callbacks on. /sched/goroutines:goroutines, the source before, also
// counts the runtime's own goroutines and fails this test.
func TestGoroutinesAsClientGolang(t *testing.T) {
	if err := runmetrics.Enable(runmetrics.Options{NoProcess: true}); err != nil {
		t.Fatal(err)
	}
	defer runmetrics.Disable()
	lo := runtime.NumGoroutine()
	metric.Collect()
	hi := runtime.NumGoroutine() + len(core.Callbacks())
	sched := read("/sched/goroutines:goroutines")[0].Value.Uint64()
	v := value(t, "go_goroutines")
	t.Logf("NumGoroutine %d..%d, /sched/goroutines %d, go_goroutines %v", lo, hi, sched, v)
	if v < float64(lo) || v > float64(hi) {
		t.Errorf("go_goroutines = %v; want runtime.NumGoroutine's count, in [%d, %d]", v, lo, hi)
	}
}
