package runmetrics

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"time"

	"github.com/zerostat/zerostat/internal/core"
	"github.com/zerostat/zerostat/stats"
	"github.com/zerostat/zerostat/tag"
	"github.com/zerostat/zerostat/view"
)

// kinds of a runtime metric's view.
const (
	gauge = iota
	counter
	histogram
	summary // go_gc_duration_seconds: view.Summary(gcQuantiles...)
)

// gcQuantiles are go_gc_duration_seconds' quantiles, client_golang's:
// debug.GCStats.PauseQuantiles of length 5 are the minimum, the 25th,
// 50th and 75th percentiles and the maximum of the runtime's pause
// history (its last 256 cycles).
var gcQuantiles = []float64{0, 0.25, 0.5, 0.75, 1}

// sources of a metric's value other than runtime/metrics samples and
// /proc (a process metric).
const (
	srcSamples  = iota // runtime/metrics (or /proc, for a process metric)
	srcFunc            // Metric.fn
	srcLastGC          // debug.GCStats.LastGC, in seconds since 1970
	srcGCPauses        // debug.GCStats' pause history, one value per GC cycle
	srcInfo            // 1, tagged version=runtime.Version()
)

// A Metric is a runtime/metrics sample (or the sum of several) exported
// as a view.
type Metric struct {
	View *view.View
	// Samples are the runtime/metrics names whose values are summed
	// ("/sched/goroutines:goroutines"); none for a process metric,
	// go_goroutines, go_threads, go_info, go_gc_duration_seconds and
	// go_memstats_last_gc_time_seconds.
	Samples []string
	kind    int
	src     int
	fn      func() float64 // the value of a srcFunc metric (go_goroutines, go_threads)
}

// secondsBounds are the histograms' bucket bounds in seconds, 1 µs to
// 10 s by factors of about 2.5 and 4: coarse enough for a classic
// histogram (client_golang re-buckets the runtime's ~160 buckets
// likewise), fine enough to tell microsecond from millisecond latencies.
var secondsBounds = []float64{1e-6, 2.5e-6, 1e-5, 2.5e-5, 1e-4, 2.5e-4, 1e-3, 2.5e-3, 1e-2, 2.5e-2, 0.1, 0.25, 1, 2.5, 10}

// runtime.MemStats' Mallocs and Frees as runtime/metrics sums: the
// runtime counts tiny allocations (several pointer-free objects under
// 16 B sharing one 16 B block) apart, and MemStats adds their count to
// both, so Mallocs-Frees stays the live object count (Go's runtime/metrics
// documentation; client_golang v1.25.0 memStatsFromRM, the source of its
// go_memstats_mallocs_total and go_memstats_frees_total, likewise).
const (
	mallocsSamples = "/gc/heap/allocs:objects+/gc/heap/tiny/allocs:objects"
	freesSamples   = "/gc/heap/frees:objects+/gc/heap/tiny/allocs:objects"
)

// numGoroutine is client_golang's go_goroutines (and OpenCensus's
// runmetrics' process/cpu_goroutines): runtime.NumGoroutine(), the
// program's goroutines. /sched/goroutines:goroutines, read before, also
// counts the runtime's own (the GC's workers, the finalizer, ...): 31
// where client_golang said 24 in one process (issue 43).
func numGoroutine() float64 { return float64(runtime.NumGoroutine()) }

// threadsCreated is client_golang's go_threads (its getRuntimeNumThreads,
// v1.25.0): the length of runtime.ThreadCreateProfile, the runtime's
// list of Ms. Unlike /sched/threads/total:threads it counts the Ms kept
// for cgo callbacks from C-created threads (one at least in a cgo
// program). It walks the list without stopping the world.
func threadsCreated() float64 {
	n, _ := runtime.ThreadCreateProfile(nil)
	return float64(n)
}

// sourced is client_golang's help text of a metric read from
// runtime/metrics: the runtime's description of sample and " Sourced from
// <sample>." (client_golang v1.25.0 attachOriginalName), so it follows the
// Go version the program is built with, as client_golang's does.
func sourced(sample string) string {
	for _, d := range metrics.All() {
		if d.Name == sample {
			return d.Description + " Sourced from " + sample + "."
		}
	}
	return "Sourced from " + sample + "."
}

func newMetric(name, desc, unit, sample string, kind int) Metric {
	var samples []string
	if sample != "" {
		samples = strings.Split(sample, "+")
	}
	agg := view.LastValue()
	switch kind {
	case counter:
		agg = view.Sum()
	case histogram:
		agg = view.DistributionUpperInclusive(secondsBounds...)
	case summary:
		agg = view.Summary(gcQuantiles...)
	}
	return Metric{View: &view.View{Name: name, Description: desc, Measure: stats.Float64(name, desc, unit), Aggregation: agg}, Samples: samples, kind: kind}
}

// funcMetric is a gauge read by calling fn when a snapshot is taken.
func funcMetric(name, desc, unit string, fn func() float64) Metric {
	m := newMetric(name, desc, unit, "", gauge)
	m.src, m.fn = srcFunc, fn
	return m
}

// versionKey is go_info's one label, as client_golang's.
var versionKey = tag.MustNewKey("version")

// gcMetrics are the Go collector's metrics read from debug.ReadGCStats, as
// client_golang's baseGoCollector reads them, and go_info.
func gcMetrics() []Metric {
	pauses := newMetric("go_gc_duration_seconds", "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.", "s", "", summary)
	pauses.src = srcGCPauses
	last := newMetric("go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", "s", "", gauge)
	last.src = srcLastGC
	info := newMetric("go_info", "Information about the Go environment.", "1", "", gauge)
	info.src = srcInfo
	info.View.TagKeys = []tag.Key{versionKey}
	return []Metric{pauses, last, info}
}

// GoMetrics are the Go runtime's metrics, named, described and typed as
// client_golang v1.25.0's Go collector (collectors.NewGoCollector(), its
// default runtime/metrics rules) names them once exported to Prometheus,
// with its help text: go_goroutines, go_info{version},
// go_memstats_heap_alloc_bytes, go_gc_duration_seconds (a summary), ...
// (go_memstats_alloc_bytes, the gauge, left out: see the package doc,
// "Differences from client_golang"). Three more are
// client_golang's with its MetricsAll rule, under its names:
// go_gc_cycles_total_gc_cycles_total, go_sched_latencies_seconds and
// go_sched_pauses_total_gc_seconds.
var GoMetrics = append([]Metric{
	funcMetric("go_goroutines", "Number of goroutines that currently exist.", "1", numGoroutine),
	funcMetric("go_threads", "Number of OS threads created.", "1", threadsCreated),
	newMetric("go_sched_gomaxprocs_threads", sourced("/sched/gomaxprocs:threads"), "1", "/sched/gomaxprocs:threads", gauge),
	newMetric("go_gc_gogc_percent", sourced("/gc/gogc:percent"), "1", "/gc/gogc:percent", gauge),
	newMetric("go_gc_gomemlimit_bytes", sourced("/gc/gomemlimit:bytes"), "By", "/gc/gomemlimit:bytes", gauge),
	// client_golang's memstats family (goRuntimeMemStats), each a
	// runtime.MemStats field rebuilt from runtime/metrics as its
	// memStatsFromRM does.
	newMetric("go_memstats_alloc_bytes", "Total number of bytes allocated in heap until now, even if released already. Equals to /gc/heap/allocs:bytes.", "By", "/gc/heap/allocs:bytes", counter),
	newMetric("go_memstats_sys_bytes", "Number of bytes obtained from system. Equals to /memory/classes/total:byte.", "By", "/memory/classes/total:bytes", gauge),
	newMetric("go_memstats_mallocs", "Total number of heap objects allocated, both live and gc-ed. Semantically a counter version for go_memstats_heap_objects gauge. Equals to /gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects.", "1", mallocsSamples, counter),
	newMetric("go_memstats_frees", "Total number of heap objects frees. Equals to /gc/heap/frees:objects + /gc/heap/tiny/allocs:objects.", "1", freesSamples, counter),
	newMetric("go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes. Equals to /memory/classes/heap/objects:bytes.", "By", heapObjects, gauge),
	newMetric("go_memstats_heap_sys_bytes", "Number of heap bytes obtained from system. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes + /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", "By",
		heapObjects+"+"+heapUnused+"+"+heapReleased+"+"+heapFree, gauge),
	newMetric("go_memstats_heap_idle_bytes", "Number of heap bytes waiting to be used. Equals to /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", "By", heapReleased+"+"+heapFree, gauge),
	newMetric("go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes", "By", heapObjects+"+"+heapUnused, gauge),
	newMetric("go_memstats_heap_released_bytes", "Number of heap bytes released to OS. Equals to /memory/classes/heap/released:bytes.", "By", heapReleased, gauge),
	newMetric("go_memstats_heap_objects", "Number of currently allocated objects. Equals to /gc/heap/objects:objects.", "1", "/gc/heap/objects:objects", gauge),
	newMetric("go_memstats_stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments. Equals to /memory/classes/heap/stacks:bytes.", "By", "/memory/classes/heap/stacks:bytes", gauge),
	newMetric("go_memstats_stack_sys_bytes", "Number of bytes obtained from system for stack allocator. Equals to /memory/classes/heap/stacks:bytes + /memory/classes/os-stacks:bytes.", "By",
		"/memory/classes/heap/stacks:bytes+/memory/classes/os-stacks:bytes", gauge),
	newMetric("go_memstats_mspan_inuse_bytes", "Number of bytes in use by mspan structures. Equals to /memory/classes/metadata/mspan/inuse:bytes.", "By", "/memory/classes/metadata/mspan/inuse:bytes", gauge),
	newMetric("go_memstats_mspan_sys_bytes", "Number of bytes used for mspan structures obtained from system. Equals to /memory/classes/metadata/mspan/inuse:bytes + /memory/classes/metadata/mspan/free:bytes.", "By",
		"/memory/classes/metadata/mspan/inuse:bytes+/memory/classes/metadata/mspan/free:bytes", gauge),
	newMetric("go_memstats_mcache_inuse_bytes", "Number of bytes in use by mcache structures. Equals to /memory/classes/metadata/mcache/inuse:bytes.", "By", "/memory/classes/metadata/mcache/inuse:bytes", gauge),
	newMetric("go_memstats_mcache_sys_bytes", "Number of bytes used for mcache structures obtained from system. Equals to /memory/classes/metadata/mcache/inuse:bytes + /memory/classes/metadata/mcache/free:bytes.", "By",
		"/memory/classes/metadata/mcache/inuse:bytes+/memory/classes/metadata/mcache/free:bytes", gauge),
	newMetric("go_memstats_buck_hash_sys_bytes", "Number of bytes used by the profiling bucket hash table. Equals to /memory/classes/profiling/buckets:bytes.", "By", "/memory/classes/profiling/buckets:bytes", gauge),
	newMetric("go_memstats_gc_sys_bytes", "Number of bytes used for garbage collection system metadata. Equals to /memory/classes/metadata/other:bytes.", "By", "/memory/classes/metadata/other:bytes", gauge),
	newMetric("go_memstats_other_sys_bytes", "Number of bytes used for other system allocations. Equals to /memory/classes/other:bytes.", "By", "/memory/classes/other:bytes", gauge),
	newMetric("go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place. Equals to /gc/heap/goal:bytes.", "By", "/gc/heap/goal:bytes", gauge),
	// Beyond client_golang's defaults: its MetricsAll names.
	newMetric("go_gc_cycles_total_gc_cycles", sourced("/gc/cycles/total:gc-cycles"), "1", "/gc/cycles/total:gc-cycles", counter),
	newMetric("go_sched_latencies_seconds", sourced("/sched/latencies:seconds"), "s", "/sched/latencies:seconds", histogram),
	newMetric("go_sched_pauses_total_gc_seconds", sourced("/sched/pauses/total/gc:seconds"), "s", "/sched/pauses/total/gc:seconds", histogram),
}, gcMetrics()...)

// The heap's memory classes, as runtime/metrics names them.
const (
	heapObjects  = "/memory/classes/heap/objects:bytes"
	heapUnused   = "/memory/classes/heap/unused:bytes"
	heapFree     = "/memory/classes/heap/free:bytes"
	heapReleased = "/memory/classes/heap/released:bytes"
)

// OpenCensusMetrics are the Go runtime's metrics under OpenCensus
// runmetrics' names, descriptions and units (go.opencensus.io/plugin/runmetrics
// v0.24.0 with EnableMemory and EnableCPU, without a Prefix), as gauges,
// each read from runtime/metrics (the MemStats field it names, rebuilt as
// Go's runtime/metrics documentation maps them). Left out, having no
// runtime/metrics source: process/memory_lookups (the runtime no longer
// counts lookups), process/last_gc_finished_timestamp, process/pause_total
// and process/gc_cpu_fraction.
var OpenCensusMetrics = []Metric{
	newMetric("process/memory_alloc", "Number of bytes currently allocated in use", "By", "/memory/classes/heap/objects:bytes", gauge),
	newMetric("process/total_memory_alloc", "Number of allocations in total", "By", "/gc/heap/allocs:bytes", gauge),
	newMetric("process/sys_memory_alloc", "Number of bytes given to the process to use in total", "By", "/memory/classes/total:bytes", gauge),
	newMetric("process/memory_malloc", "Cumulative count of heap objects allocated", "1", mallocsSamples, gauge),
	newMetric("process/memory_frees", "Cumulative count of heap objects freed", "1", freesSamples, gauge),
	newMetric("process/heap_alloc", "Process heap allocation", "By", "/memory/classes/heap/objects:bytes", gauge),
	newMetric("process/sys_heap", "Bytes of heap memory obtained from the OS", "By",
		"/memory/classes/heap/objects:bytes+/memory/classes/heap/unused:bytes+/memory/classes/heap/free:bytes+/memory/classes/heap/released:bytes", gauge),
	newMetric("process/heap_idle", "Bytes in idle (unused) spans", "By", "/memory/classes/heap/free:bytes+/memory/classes/heap/released:bytes", gauge),
	newMetric("process/heap_inuse", "Bytes in in-use spans", "By", "/memory/classes/heap/objects:bytes+/memory/classes/heap/unused:bytes", gauge),
	newMetric("process/heap_objects", "The number of objects allocated on the heap", "1", "/gc/heap/objects:objects", gauge),
	newMetric("process/heap_release", "The cumulative number of objects released from the heap", "By", "/memory/classes/heap/released:bytes", gauge),
	newMetric("process/stack_inuse", "Bytes in stack spans", "By", "/memory/classes/heap/stacks:bytes", gauge),
	newMetric("process/sys_stack", "The memory used by stack spans and OS thread stacks", "By", "/memory/classes/heap/stacks:bytes+/memory/classes/os-stacks:bytes", gauge),
	newMetric("process/stack_mspan_inuse", "Bytes of allocated mspan structures", "By", "/memory/classes/metadata/mspan/inuse:bytes", gauge),
	newMetric("process/sys_stack_mspan", "Bytes of memory obtained from the OS for mspan structures", "By",
		"/memory/classes/metadata/mspan/inuse:bytes+/memory/classes/metadata/mspan/free:bytes", gauge),
	newMetric("process/stack_mcache_inuse", "Bytes of allocated mcache structures", "By", "/memory/classes/metadata/mcache/inuse:bytes", gauge),
	newMetric("process/sys_stack_mcache", "Bytes of memory obtained from the OS for mcache structures", "By",
		"/memory/classes/metadata/mcache/inuse:bytes+/memory/classes/metadata/mcache/free:bytes", gauge),
	newMetric("process/gc_sys", "Bytes of memory in garbage collection metadatas", "By", "/memory/classes/metadata/other:bytes", gauge),
	newMetric("process/other_sys", "Bytes of memory in miscellaneous off-heap runtime allocations", "By", "/memory/classes/other:bytes", gauge),
	newMetric("process/num_gc", "Cumulative count of completed GC cycles", "1", "/gc/cycles/total:gc-cycles", gauge),
	newMetric("process/num_forced_gc", "Cumulative count of GC cycles forced by the application", "1", "/gc/cycles/forced:gc-cycles", gauge),
	newMetric("process/next_gc_heap_size", "Target heap size of the next GC cycle in bytes", "By", "/gc/heap/goal:bytes", gauge),
	funcMetric("process/cpu_goroutines", "Number of goroutines that currently exist", "1", numGoroutine),
	newMetric("process/cpu_cgo_calls", "Number of cgo calls made by the current process", "1", "/cgo/go-to-c-calls:calls", gauge),
}

// collector is the one core.Callback that reads every enabled metric
// with a single metrics.Read per snapshot (and one debug.ReadGCStats when
// a metric needs it). Run (read) fills the buffers, Apply (apply) records
// from them; core.Collect serialises the two.
type collector struct {
	ms      []Metric
	samples []metrics.Sample // every sample the metrics read, once each
	idx     [][]int          // by metric: its samples' indexes in samples
	ms2     []*stats.Float64Measure
	aggs    []*core.Aggregator // histograms' aggregators, by index in ms
	last    []float64          // counters: the last value recorded
	fnv     []float64          // by metric: fn's value, for those with fn
	hlast   [][]uint64         // histograms: the last counts recorded
	proc    procValues
	procOK  bool
	procErr error
	cb      core.Callback

	// GC statistics, for go_gc_duration_seconds and
	// go_memstats_last_gc_time_seconds: read (needGC), its buffers kept
	// from one snapshot to the next (ReadGCStats then allocates nothing;
	// its PauseQuantiles have gcQuantiles' length), and the quantiles in
	// seconds.
	needGC bool
	gcs    debug.GCStats
	gcq    []float64

	infoCtx context.Context // go_info's tags: version=runtime.Version()
}

var (
	mu      sync.Mutex
	enabled *collector
)

// Options select what Enable exports.
type Options struct {
	// NoProcess leaves out the process metrics (ProcessMetrics).
	NoProcess bool
	// OpenCensusNames exports the Go runtime's metrics under OpenCensus
	// runmetrics' names instead (OpenCensusMetrics: process/heap_alloc,
	// ..., as gauges), for dashboards built on go.opencensus.io/plugin/runmetrics.
	// The process metrics keep client_golang's names.
	OpenCensusNames bool
}

// Enable registers the Go runtime's metrics (GoMetrics) and, unless
// opts.NoProcess, the process's (ProcessMetrics, on Linux), read when a
// snapshot is taken: no goroutine polls. Cost per snapshot: one
// runtime/metrics.Read of up to 26 samples (it does not stop the world),
// a runtime.ThreadCreateProfile count for go_threads, a
// debug.ReadGCStats for the GC pause history and last GC time, the
// process's /proc reads (two small files and a stat), and one record per
// metric: 5 µs without the process metrics, 120 µs with them on a loaded
// 2-core VM (BenchmarkCollect; see the package doc). It returns an error
// if a view cannot be registered (a different view of the same name
// exists) or Enable was called already without Disable.
func Enable(opts Options) error {
	mu.Lock()
	defer mu.Unlock()
	if enabled != nil {
		return errors.New("runmetrics: already enabled")
	}
	goms := GoMetrics
	if opts.OpenCensusNames {
		goms = OpenCensusMetrics
	}
	c := &collector{ms: goms}
	if !opts.NoProcess {
		c.ms = append(append([]Metric(nil), goms...), ProcessMetrics...)
		c.procOK = true
	}
	vs := make([]*view.View, len(c.ms))
	for i, m := range c.ms {
		vs[i] = m.View
	}
	if err := view.Register(vs...); err != nil {
		return fmt.Errorf("runmetrics: %w", err)
	}
	c.ms2 = make([]*stats.Float64Measure, len(c.ms))
	c.aggs = make([]*core.Aggregator, len(c.ms))
	c.last = make([]float64, len(c.ms))
	c.fnv = make([]float64, len(c.ms))
	c.hlast = make([][]uint64, len(c.ms))
	for i, m := range c.ms {
		c.ms2[i] = m.View.Measure.(*stats.Float64Measure)
		c.needGC = c.needGC || m.src == srcLastGC || m.src == srcGCPauses
		if m.kind == histogram || m.kind == summary {
			if cv := core.FindView(m.View.Name); cv != nil {
				c.aggs[i] = cv.Agg
			}
		}
	}
	if c.needGC {
		c.gcs.PauseQuantiles = make([]time.Duration, len(gcQuantiles))
		c.gcq = make([]float64, len(gcQuantiles))
	}
	c.idx = make([][]int, len(c.ms))
	at := map[string]int{}
	for i, m := range c.ms {
		for _, name := range m.Samples {
			j, ok := at[name]
			if !ok {
				j = len(c.samples)
				at[name] = j
				c.samples = append(c.samples, metrics.Sample{Name: name})
			}
			c.idx[i] = append(c.idx[i], j)
		}
	}
	ctx, err := tag.New(context.Background(), tag.Upsert(versionKey, runtime.Version()))
	if err != nil {
		for _, v := range vs {
			view.Unregister(v)
		}
		return fmt.Errorf("runmetrics: %w", err)
	}
	c.infoCtx = ctx
	c.cb = core.Callback{Name: "runmetrics", Run: c.read, Apply: c.apply}
	core.AddCallback(&c.cb)
	enabled = c
	return nil
}

// Disable stops reading and unregisters the views Enable registered.
func Disable() {
	mu.Lock()
	defer mu.Unlock()
	if enabled == nil {
		return
	}
	core.RemoveCallback(&enabled.cb)
	for _, m := range enabled.ms {
		view.Unregister(m.View)
	}
	enabled = nil
}

// Err returns the last failure of the runtime callback (a panic, a
// timeout, an unreadable /proc file), nil when none.
func Err() error {
	mu.Lock()
	defer mu.Unlock()
	if enabled == nil {
		return nil
	}
	return enabled.cb.Err()
}

func (c *collector) read() {
	metrics.Read(c.samples)
	for i, m := range c.ms {
		if m.fn != nil {
			c.fnv[i] = m.fn()
		}
	}
	if c.needGC {
		debug.ReadGCStats(&c.gcs)
	}
	if c.procOK {
		c.procErr = readProc(&c.proc)
	}
}

func (c *collector) apply() {
	if c.procErr != nil {
		c.cb.Report(fmt.Errorf("runmetrics: process metrics: %w", c.procErr))
	}
	for i, m := range c.ms {
		var v float64
		var h *metrics.Float64Histogram
		switch {
		case m.src == srcFunc:
			v = c.fnv[i]
		case m.src == srcLastGC: // client_golang's formula
			v = float64(c.gcs.LastGC.UnixNano()) / 1e9
		case m.src == srcGCPauses:
			if c.aggs[i] != nil {
				c.setPauses(c.aggs[i])
			}
			continue
		case m.src == srcInfo:
			stats.Record(c.infoCtx, c.ms2[i].M(1))
			continue
		case len(m.Samples) > 0:
			ok := true
			for _, j := range c.idx[i] {
				switch s := &c.samples[j]; s.Value.Kind() {
				case metrics.KindUint64:
					v += float64(s.Value.Uint64())
				case metrics.KindFloat64:
					v += s.Value.Float64()
				case metrics.KindFloat64Histogram:
					h = s.Value.Float64Histogram()
				default:
					ok = false // not supported by this Go version
				}
			}
			if !ok {
				continue
			}
		default: // a process metric
			var ok bool
			if v, ok = c.proc.value(m.View.Name); !ok {
				continue
			}
		}
		switch m.kind {
		case gauge:
			stats.Record(nil, c.ms2[i].M(v))
		case counter:
			if v < c.last[i] { // never from the runtime; a source that reset
				c.last[i] = v
				continue
			}
			stats.Record(nil, c.ms2[i].M(v-c.last[i]))
			c.last[i] = v
		case histogram:
			if h != nil && c.aggs[i] != nil {
				c.hlast[i] = recordHist(c.aggs[i], h, c.hlast[i])
			}
		}
	}
}

// setPauses sets go_gc_duration_seconds (agg, a summary) from the GC
// statistics read, as client_golang v1.25.0's baseGoCollector builds its
// summary: count GCStats.NumGC, sum GCStats.PauseTotal in seconds, and
// quantiles 0, 0.25, 0.5, 0.75 and 1 GCStats.PauseQuantiles in seconds
// (the minimum, quartiles and maximum of the runtime's history of the
// last 256 stop-the-world pauses; all 0 before the first cycle, as
// ReadGCStats gives them). One allocation (the summary's value).
func (c *collector) setPauses(agg *core.Aggregator) {
	g := &c.gcs
	for i, q := range g.PauseQuantiles {
		c.gcq[i] = q.Seconds()
	}
	if err := agg.SetSummary(nil, uint64(g.NumGC), g.PauseTotal.Seconds(), c.gcq); err != nil {
		c.cb.Report(fmt.Errorf("runmetrics: go_gc_duration_seconds: %w", err))
	}
}

// recordHist records the counts of h added since last into agg, each
// runtime bucket's at its lower bound (its upper bound for the first one
// when that is -Inf): a runtime bucket is far narrower than agg's, so
// only one straddling a bound of agg is counted one bucket off, and the
// sum is the lower bounds' (as client_golang's sum of a runtime histogram
// is approximate too). It returns the counts to keep as last.
func recordHist(agg *core.Aggregator, h *metrics.Float64Histogram, last []uint64) []uint64 {
	if len(last) != len(h.Counts) {
		last = make([]uint64, len(h.Counts))
	}
	for j, n := range h.Counts {
		d := n - last[j]
		if d == 0 || n < last[j] {
			continue
		}
		v := h.Buckets[j]
		if math.IsInf(v, -1) {
			v = h.Buckets[j+1]
		}
		agg.RecordDistN(nil, v, d)
		last[j] = n
	}
	return last
}
