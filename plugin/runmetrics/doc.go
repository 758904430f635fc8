// Package runmetrics exports the Go runtime's metrics (runtime/metrics:
// goroutines, threads, heap, GC cycles, GC pauses and scheduler latency
// as histograms) and the process's (CPU seconds, resident and virtual
// memory, open and maximum file descriptors, start time), named as
// client_golang's Go and process collectors name them once exported to
// Prometheus, so dashboards built on go_* and process_* keep working:
//
//	if err := runmetrics.Enable(runmetrics.Options{}); err != nil { ... }
//
// The values are client_golang's too (its Go collector with the default,
// runtime/metrics-based rules): go_memstats_mallocs_total and
// go_memstats_frees_total are runtime.MemStats' Mallocs and Frees, tiny
// allocations included in both (/gc/heap/allocs:objects and
// /gc/heap/frees:objects each plus /gc/heap/tiny/allocs:objects), and
// go_threads is runtime.ThreadCreateProfile's count of the runtime's
// threads, which unlike /sched/threads/total:threads includes those kept
// for cgo callbacks.
//
// # When they are read
//
// When a snapshot is taken (an export, a scrape, /debug/stats), through
// the same hook as the metric package's callback gauges: no goroutine
// polls, and a program that takes no snapshot pays nothing. One
// runtime/metrics.Read per snapshot serves every Go metric but go_threads
// (runtime.ThreadCreateProfile, a walk of the runtime's thread list); the
// process metrics read /proc/self/stat and list /proc/self/fd (Linux only).
//
// # Cost
//
// Per snapshot: metrics.Read of 15 samples (it does not stop the world,
// unlike runtime.ReadMemStats), runtime.ThreadCreateProfile's count (it
// does not either), the /proc reads, one record per gauge and
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
