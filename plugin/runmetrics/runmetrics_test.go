package runmetrics_test

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zerostat/zerostat/exporter/prometheus"
	"github.com/zerostat/zerostat/metric"
	"github.com/zerostat/zerostat/plugin/runmetrics"
	"github.com/zerostat/zerostat/view"
)

// TestMain gives the runtime callback seconds, not the default 1 s, so a
// loaded machine stalling its goroutine does not fail the tests.
func TestMain(m *testing.M) {
	metric.SetTimeout(10 * time.Second)
	os.Exit(m.Run())
}

func value(t *testing.T, name string) float64 {
	t.Helper()
	rows, err := view.RetrieveData(name)
	if err != nil || len(rows) != 1 {
		t.Fatalf("%s: %d rows, %v", name, len(rows), err)
	}
	switch d := rows[0].Data.(type) {
	case *view.LastValueData:
		return d.Value
	case *view.SumData:
		return d.Value
	case *view.DistributionData:
		return float64(d.Count)
	}
	t.Fatalf("%s: %T", name, rows[0].Data)
	return 0
}

func read(names ...string) []metrics.Sample {
	s := make([]metrics.Sample, len(names))
	for i, n := range names {
		s[i].Name = n
	}
	metrics.Read(s)
	return s
}

func histCount(h *metrics.Float64Histogram) (n uint64) {
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// TestAgainstRuntimeMetrics checks each value against runtime/metrics read
// just before and just after the snapshot: exact for settings, between
// the two reads for cumulative values.
func TestAgainstRuntimeMetrics(t *testing.T) {
	if err := runmetrics.Enable(runmetrics.Options{}); err != nil {
		t.Fatal(err)
	}
	defer runmetrics.Disable()
	if err := runmetrics.Enable(runmetrics.Options{}); err == nil {
		t.Error("second Enable: got nil error")
	}
	names := []string{"/gc/cycles/total:gc-cycles", "/gc/heap/allocs:bytes", "/sched/latencies:seconds", "/sched/pauses/total/gc:seconds"}
	for round := 0; round < 2; round++ { // the second checks the deltas
		runtime.GC()
		before := read(names...)
		metric.Collect()
		after := read(names...)
		between := func(view string, lo, hi float64) {
			t.Helper()
			if v := value(t, view); v < lo || v > hi {
				t.Errorf("round %d: %s = %v; want in [%v, %v] (runtime/metrics)", round, view, v, lo, hi)
			}
		}
		between("go_gc_cycles_total_gc_cycles", float64(before[0].Value.Uint64()), float64(after[0].Value.Uint64()))
		between("go_memstats_alloc_bytes", float64(before[1].Value.Uint64()), float64(after[1].Value.Uint64()))
		between("go_sched_latencies_seconds", float64(histCount(before[2].Value.Float64Histogram())), float64(histCount(after[2].Value.Float64Histogram())))
		between("go_sched_pauses_total_gc_seconds", float64(histCount(before[3].Value.Float64Histogram())), float64(histCount(after[3].Value.Float64Histogram())))
	}
	if got, want := value(t, "go_sched_gomaxprocs_threads"), float64(runtime.GOMAXPROCS(0)); got != want {
		t.Errorf("go_sched_gomaxprocs_threads: got %v; want %v", got, want)
	}
	if got := value(t, "go_gc_gogc_percent"); got != float64(read("/gc/gogc:percent")[0].Value.Uint64()) {
		t.Errorf("go_gc_gogc_percent: got %v", got)
	}
	if got := value(t, "go_goroutines"); got < 2 {
		t.Errorf("go_goroutines: got %v", got)
	}
	if runtime.GOOS == "linux" {
		var rl syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			t.Fatal(err)
		}
		if got := value(t, "process_max_fds"); got != float64(rl.Cur) {
			t.Errorf("process_max_fds: got %v; want %v", got, rl.Cur)
		}
		fds, _ := os.ReadDir("/proc/self/fd")
		if got := value(t, "process_open_fds"); got < 3 || got > float64(len(fds))+8 {
			t.Errorf("process_open_fds: got %v; /proc/self/fd lists %d", got, len(fds))
		}
		now := float64(time.Now().Unix())
		if got := value(t, "process_start_time_seconds"); got > now+1 || got < now-86400 {
			t.Errorf("process_start_time_seconds: got %v; now is %v", got, now)
		}
		if got := value(t, "process_resident_memory_bytes"); got < 1<<20 {
			t.Errorf("process_resident_memory_bytes: got %v", got)
		}
		// The kernel's clock ticks (10 ms) of CPU time, as client_golang
		// reads them: at most getrusage's microseconds read after.
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			t.Fatal(err)
		}
		cpu := float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
		if got := value(t, "process_cpu_seconds"); got < 0 || got > cpu+0.01 {
			t.Errorf("process_cpu_seconds: got %v; getrusage says %v", got, cpu)
		}
		if got := value(t, "process_virtual_memory_max_bytes"); got <= 0 {
			t.Errorf("process_virtual_memory_max_bytes: got %v", got)
		}
	}
	if err := runmetrics.Err(); err != nil {
		t.Errorf("Err: %v", err)
	}
	out := string(prometheus.NewHandler(prometheus.Options{}).AppendFormat(nil, prometheus.FormatText))
	want := []string{"# TYPE go_goroutines gauge", "# TYPE go_sched_latencies_seconds histogram",
		"# TYPE go_gc_cycles_total_gc_cycles_total counter", "go_memstats_heap_alloc_bytes ", "go_memstats_alloc_bytes_total "}
	if runtime.GOOS == "linux" {
		want = append(want, "# TYPE process_cpu_seconds_total counter", "process_resident_memory_bytes ", "process_start_time_seconds ",
			"# TYPE process_network_receive_bytes_total counter", "# TYPE process_network_transmit_bytes_total counter")
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("scrape lacks %q", w)
		}
	}
}

// TestOpenCensusNames checks the OpenCensus-named gauges against
// runtime.ReadMemStats read just before and after the snapshot.
func TestOpenCensusNames(t *testing.T) {
	if err := runmetrics.Enable(runmetrics.Options{OpenCensusNames: true, NoProcess: true}); err != nil {
		t.Fatal(err)
	}
	defer runmetrics.Disable()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	metric.Collect()
	runtime.ReadMemStats(&after)
	exact := map[string][2]uint64{ // between before and after
		"process/num_gc":             {uint64(before.NumGC), uint64(after.NumGC)},
		"process/num_forced_gc":      {uint64(before.NumForcedGC), uint64(after.NumForcedGC)},
		"process/total_memory_alloc": {before.TotalAlloc, after.TotalAlloc},
		"process/memory_frees":       {before.Frees, after.Frees},
		"process/memory_malloc":      {before.Mallocs, after.Mallocs},
	}
	for name, r := range exact {
		if v := value(t, name); v < float64(r[0]) || v > float64(r[1]) {
			t.Errorf("%s = %v; MemStats between %d and %d", name, v, r[0], r[1])
		}
	}
	// Memory classes move with every allocation: within 25% of MemStats
	// (the test's own allocations between the reads are a few KiB).
	near := map[string]uint64{
		"process/heap_alloc": after.HeapAlloc, "process/sys_heap": after.HeapSys, "process/heap_idle": after.HeapIdle,
		"process/heap_inuse": after.HeapInuse, "process/heap_objects": after.HeapObjects, "process/sys_memory_alloc": after.Sys,
		"process/stack_inuse": after.StackInuse, "process/sys_stack": after.StackSys, "process/stack_mspan_inuse": after.MSpanInuse,
		"process/sys_stack_mspan": after.MSpanSys, "process/sys_stack_mcache": after.MCacheSys,
		"process/gc_sys": after.GCSys, "process/next_gc_heap_size": after.NextGC,
	}
	for name, want := range near {
		if v := value(t, name); v < 0.75*float64(want) || v > 1.25*float64(want) {
			t.Errorf("%s = %v; MemStats %d", name, v, want)
		}
	}
	if _, err := view.RetrieveData("go_goroutines"); err == nil {
		t.Error("client_golang names registered too")
	}
}

// BenchmarkCollect is the cost runmetrics adds to each snapshot: one
// Collect with only its callback registered (goroutine, timer, Read,
// /proc reads, records). NoProcess=true isolates runtime/metrics.
func BenchmarkCollect(b *testing.B) {
	for _, noProc := range []bool{true, false} {
		name := "process=true"
		if noProc {
			name = "process=false"
		}
		b.Run(name, func(b *testing.B) {
			if err := runmetrics.Enable(runmetrics.Options{NoProcess: noProc}); err != nil {
				b.Fatal(err)
			}
			defer runmetrics.Disable()
			b.ReportAllocs()
			for b.Loop() {
				metric.Collect()
			}
		})
	}
}

// TestGCDurationAsClientGolang checks go_gc_duration_seconds and
// go_memstats_last_gc_time_seconds against debug.ReadGCStats, which
// client_golang reads for its go_gc_duration_seconds (a summary: _count
// NumGC, _sum PauseTotal, quantiles 0, 0.25, 0.5, 0.75 and 1 the five
// PauseQuantiles) and go_memstats_last_gc_time_seconds, with GC off
// between the reads: all exactly. The second round runs more GC cycles
// than the runtime's pause history keeps (256): the quantiles are the
// history's, the count and sum every cycle's.
func TestGCDurationAsClientGolang(t *testing.T) {
	if err := runmetrics.Enable(runmetrics.Options{NoProcess: true}); err != nil {
		t.Fatal(err)
	}
	defer runmetrics.Disable()
	for round, cycles := range []int{2, 260} {
		for range cycles {
			runtime.GC()
		}
		old := debug.SetGCPercent(-1)
		var before, after debug.GCStats
		before.PauseQuantiles = make([]time.Duration, 5) // client_golang's
		debug.ReadGCStats(&before)
		metric.Collect()
		debug.ReadGCStats(&after)
		debug.SetGCPercent(old)
		if before.NumGC != after.NumGC {
			t.Fatalf("round %d: a GC cycle ran with GC off", round)
		}
		rows, err := view.RetrieveData("go_gc_duration_seconds")
		if err != nil || len(rows) != 1 {
			t.Fatalf("go_gc_duration_seconds: %d rows, %v", len(rows), err)
		}
		d, ok := rows[0].Data.(*view.SummaryData)
		if !ok {
			t.Fatalf("go_gc_duration_seconds: %T; want a summary", rows[0].Data)
		}
		if d.Count != before.NumGC {
			t.Errorf("round %d: go_gc_duration_seconds_count = %d; want NumGC %d", round, d.Count, before.NumGC)
		}
		if sum, want := d.Sum, before.PauseTotal.Seconds(); sum != want {
			t.Errorf("round %d: go_gc_duration_seconds_sum = %v; want PauseTotal %v", round, sum, want)
		}
		if !slices.Equal(d.Quantiles, []float64{0, 0.25, 0.5, 0.75, 1}) || len(d.Values) != 5 {
			t.Fatalf("round %d: quantiles %v, values %v", round, d.Quantiles, d.Values)
		}
		for i, q := range before.PauseQuantiles {
			if d.Values[i] != q.Seconds() {
				t.Errorf("round %d: go_gc_duration_seconds{quantile=%v} = %v; want PauseQuantiles[%d] %v", round, d.Quantiles[i], d.Values[i], i, q.Seconds())
			}
		}
		if d.Values[4] == 0 || d.Values[0] > d.Values[4] {
			t.Errorf("round %d: quantiles %v after %d cycles", round, d.Values, cycles)
		}
		if got, want := value(t, "go_memstats_last_gc_time_seconds"), float64(before.LastGC.UnixNano())/1e9; got != want {
			t.Errorf("round %d: go_memstats_last_gc_time_seconds = %v; want %v", round, got, want)
		}
	}
}

// TestGoInfo: go_info is 1, labelled version=runtime.Version(), as
// client_golang's.
func TestGoInfo(t *testing.T) {
	if err := runmetrics.Enable(runmetrics.Options{NoProcess: true}); err != nil {
		t.Fatal(err)
	}
	defer runmetrics.Disable()
	metric.Collect()
	rows, err := view.RetrieveData("go_info")
	if err != nil || len(rows) != 1 {
		t.Fatalf("go_info: %d rows, %v", len(rows), err)
	}
	r := rows[0]
	if len(r.Tags) != 1 || r.Tags[0].Key.Name() != "version" || r.Tags[0].Value != runtime.Version() {
		t.Errorf("go_info tags %v; want version=%s", r.Tags, runtime.Version())
	}
	if v := r.Data.(*view.LastValueData).Value; v != 1 {
		t.Errorf("go_info = %v; want 1", v)
	}
}
