// Package runmetrics exports the Go runtime's metrics (runtime/metrics:
// goroutines, threads, heap, GC cycles, GC pauses and scheduler latency
// as histograms) and the process's (CPU seconds, resident and virtual
// memory, open and maximum file descriptors, start time), named as
// client_golang's Go and process collectors name them once exported to
// Prometheus, so dashboards built on go_* and process_* keep working:
//
//	if err := runmetrics.Enable(runmetrics.Options{}); err != nil { ... }
//
// # When they are read
//
// When a snapshot is taken (an export, a scrape, /debug/stats), through
// the same hook as the metric package's callback gauges: no goroutine
// polls, and a program that takes no snapshot pays nothing. One
// runtime/metrics.Read per snapshot serves every Go metric; the process
// metrics read /proc/self/stat and list /proc/self/fd (Linux only).
//
// # Cost
//
// Per snapshot: metrics.Read of 15 samples (it does not stop the world,
// unlike runtime.ReadMemStats), the /proc reads, one record per gauge and
// counter, one weighted record per changed runtime histogram bucket.
// BenchmarkCollect on the project's 2-core VM (medians of 6, under load):
// 3.5 µs and 6 allocations per snapshot without the process metrics,
// 36 µs and 24 allocations with them (the /proc reads). A failure (an unreadable /proc file, a panic)
// drops only these values of that snapshot and is reported by Err and by
// selfstats' zerostat/callback_failures{callback="runmetrics"}.
//
// # Not covered
//
// client_golang's go_gc_duration_seconds is a summary; zerostat has no
// summaries, so GC pauses are go_sched_pauses_total_gc_seconds, a
// histogram (client_golang's name for the same runtime metric).
//
// # OpenCensus names
//
// Options.OpenCensusNames exports the runtime's metrics under OpenCensus
// runmetrics' names instead (OpenCensusMetrics: process/heap_alloc,
// process/num_gc, ..., gauges with its descriptions and units), rebuilt
// from runtime/metrics; four of its 28 metrics have no runtime/metrics
// source and are left out (see OpenCensusMetrics). Its Prefix and
// UseDerivedCumulative options are not offered.
//
// Enable, Disable and Err are safe for concurrent use.
package runmetrics
